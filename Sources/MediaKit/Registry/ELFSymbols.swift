/// Reads the dynamic symbol table of an ELF shared library without loading it, so
/// that the registry never runs the constructors of a file that is not a plugin.
enum ELFSymbols {
    /// Whether the 64-bit little-endian ELF file at `path` defines the global dynamic
    /// symbol `name`. Nil when the file is not an ELF file this check understands
    /// (the caller then decides whether to try loading it).
    static func defines(_ name: String, in path: String) -> Bool? {
        guard let file = try? FileSource(path: path), file.size >= 64,
              let header = try? file.read(at: 0, count: 64),
              header[0] == 0x7F, header[1] == 0x45, header[2] == 0x4C, header[3] == 0x46 else { return false }
        guard header[4] == 2, header[5] == 1 else { return nil }   // ELFCLASS64, little-endian only
        func u16(_ b: [UInt8], _ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 }
        func u32(_ b: [UInt8], _ o: Int) -> Int { u16(b, o) | u16(b, o + 2) << 16 }
        func u64(_ b: [UInt8], _ o: Int) -> Int64 { Int64(u32(b, o)) | Int64(u32(b, o + 4)) << 32 }
        let shoff = u64(header, 0x28), shentsize = u16(header, 0x3A), shnum = u16(header, 0x3C)
        guard shentsize >= 64, shnum > 0, shnum < 4096, shoff > 0, shoff + Int64(shnum * shentsize) <= file.size,
              let sections = try? file.read(at: shoff, count: shnum * shentsize) else { return nil }
        let target = Array(name.utf8)
        for i in 0..<shnum {
            let s = i * shentsize
            guard u32(sections, s + 4) == 11 else { continue }          // SHT_DYNSYM
            let symOffset = u64(sections, s + 0x18), symSize = u64(sections, s + 0x20)
            let link = u32(sections, s + 0x28), entSize = Int(u64(sections, s + 0x38))
            guard link < shnum, entSize >= 24, symSize > 0, symSize < 64 << 20, symOffset + symSize <= file.size else { return nil }
            let l = link * shentsize
            let strOffset = u64(sections, l + 0x18), strSize = u64(sections, l + 0x20)
            guard strSize > 0, strSize < 64 << 20, strOffset + strSize <= file.size,
                  let symbols = try? file.read(at: symOffset, count: Int(symSize)),
                  let strings = try? file.read(at: strOffset, count: Int(strSize)) else { return nil }
            var k = 0
            while k + entSize <= symbols.count {
                let nameIndex = u32(symbols, k), info = symbols[k + 4], section = u16(symbols, k + 6)
                let binding = info >> 4
                if section != 0 && (binding == 1 || binding == 2), nameIndex + target.count < strings.count,
                   strings[nameIndex + target.count] == 0, Array(strings[nameIndex..<(nameIndex + target.count)]) == target {
                    return true
                }
                k += entSize
            }
            return false
        }
        return false
    }
}
