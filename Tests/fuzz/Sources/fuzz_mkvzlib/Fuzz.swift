import FuzzHarness

/// libFuzzer's entry point: one input through FuzzHarness's "mkvzlib" target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzHarness.targets["mkvzlib"]!(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
