// libFuzzer target: CSV and TSV previews (DelimitedTable.parse, then PreviewPages.table). Built and run by scripts/fuzz table.
import InboxCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let broken = FuzzEntry.table(Array(UnsafeBufferPointer(start: data, count: size)))
    if !broken.isEmpty { fatalError(broken.joined(separator: "; ")) }
    return 0
}
