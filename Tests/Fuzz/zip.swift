// libFuzzer target: ZIP central directory (ZipDirectory.locate and parse). Built and run by scripts/fuzz zip.
import InboxCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let broken = FuzzEntry.zip(Array(UnsafeBufferPointer(start: data, count: size)))
    if !broken.isEmpty { fatalError(broken.joined(separator: "; ")) }
    return 0
}
