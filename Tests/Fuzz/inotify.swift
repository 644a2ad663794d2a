// libFuzzer target: the inotify read-buffer parser. Built and run by scripts/fuzz inotify.
import InboxSystem

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let broken = InotifyFuzzEntry.events(Array(UnsafeBufferPointer(start: data, count: size)))
    if !broken.isEmpty { fatalError(broken.joined(separator: "; ")) }
    return 0
}
