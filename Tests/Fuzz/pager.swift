// libFuzzer target: the preview's keys (TerminalKey.parse, then PreviewPager.handle). Built and run by scripts/fuzz pager.
import InboxCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let broken = FuzzEntry.pager(Array(UnsafeBufferPointer(start: data, count: size)))
    if !broken.isEmpty { fatalError(broken.joined(separator: "; ")) }
    return 0
}
