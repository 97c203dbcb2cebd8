import MediaKit
import XCTest

/// The hash the decode tests compare frames by (TestSupport's `FNV1a`): if it did not hash,
/// every comparison made with it would pass.
final class FNV1aTests: XCTestCase {
    /// The FNV-1a 64-bit test vectors of the reference implementation
    /// (http://www.isthe.com/chongo/src/fnv/test_fnv.c: "", "a", "foobar").
    func testReferenceVectors() {
        for (text, expected) in [("", 0xcbf2_9ce4_8422_2325 as UInt64), ("a", 0xaf63_dc4c_8601_ec8c),
                                 ("foobar", 0x8594_4171_f739_67e8)] {
            var h = FNV1a()
            Array(text.utf8).withUnsafeBytes { h.add($0, count: $0.count) }
            XCTAssertEqual(h.value, expected, text)
        }
    }

    /// A picture's presented bytes are its rows without their padding: a padded picture hashes
    /// as the same picture packed, and a changed visible sample changes the hash.
    func testPresentedBytesSkipRowPadding() {
        let padded = TestPictures.make(.nv12, width: 6, height: 4, padding: 16)
        let packed = TestPictures.make(.nv12, width: 6, height: 4, padding: 0)
        var a = FNV1a(), b = FNV1a()
        a.add(presentedBytesOf: padded)
        b.add(presentedBytesOf: packed)
        XCTAssertEqual(a.value, b.value)
        var bytes = FNV1a()
        for i in packed.planes.indices {
            packed.withPlane(i) { bytes.add($0, count: $0.count) }
        }
        XCTAssertEqual(a.value, bytes.value, "packed, the presented bytes are the planes' bytes")
        UnsafeMutableRawPointer(mutating: packed.planes[1].base).storeBytes(of: 0xEE, toByteOffset: 5, as: UInt8.self)
        var c = FNV1a()
        c.add(presentedBytesOf: packed)
        XCTAssertNotEqual(c.value, b.value)
    }
}
