// libFuzzer target: freedesktop .thumbnailer files (ThumbnailerEntry.parse and arguments). Built and run by scripts/fuzz thumbnailer.
import InboxCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let broken = FuzzEntry.thumbnailer(Array(UnsafeBufferPointer(start: data, count: size)))
    if !broken.isEmpty { fatalError(broken.joined(separator: "; ")) }
    return 0
}
