// libFuzzer target: image header sizes (ImageHeader.read: PNG, JPEG, GIF, WebP, BMP, TIFF). Built and run by scripts/fuzz image-header.
import InboxCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let broken = FuzzEntry.imageHeader(Array(UnsafeBufferPointer(start: data, count: size)))
    if !broken.isEmpty { fatalError(broken.joined(separator: "; ")) }
    return 0
}
