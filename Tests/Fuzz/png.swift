// libFuzzer target: PNG chunks (PNGFile.dimensions, inserting, text). Built and run by scripts/fuzz png.
import InboxCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let broken = FuzzEntry.png(Array(UnsafeBufferPointer(start: data, count: size)))
    if !broken.isEmpty { fatalError(broken.joined(separator: "; ")) }
    return 0
}
