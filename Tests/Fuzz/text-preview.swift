// libFuzzer target: text previews (TextDecoding.decode, then PreviewPages.text). Built and run by scripts/fuzz text-preview.
import InboxCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let broken = FuzzEntry.textPreview(Array(UnsafeBufferPointer(start: data, count: size)))
    if !broken.isEmpty { fatalError(broken.joined(separator: "; ")) }
    return 0
}
