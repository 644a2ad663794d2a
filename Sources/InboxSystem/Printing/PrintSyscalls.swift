import CCups
import Glibc

// libcups, one wrapper per call (cups(1), the destination API of cups.h, ipp.h). Every call here passes
// CUPS_HTTP_DEFAULT (nil): libcups connects to the server CUPS_SERVER or client.conf names, one connection per thread,
// which is what lets cupsStartDestDocument, cupsWriteRequestData and cupsFinishDestDocument share one request.

func sys_cupsGetNamedDest(_ name: String?) -> UnsafeMutablePointer<cups_dest_t>? {
    cupsGetNamedDest(nil, name, nil)
}

func sys_cupsFreeDests(_ dest: UnsafeMutablePointer<cups_dest_t>) { cupsFreeDests(1, dest) }

func sys_cupsCopyDestInfo(_ dest: UnsafeMutablePointer<cups_dest_t>) -> OpaquePointer? { cupsCopyDestInfo(nil, dest) }

func sys_cupsFreeDestInfo(_ info: OpaquePointer) { cupsFreeDestInfo(info) }

func sys_cupsGetOption(_ name: String, _ dest: UnsafeMutablePointer<cups_dest_t>) -> String? {
    cupsGetOption(name, dest.pointee.num_options, dest.pointee.options).map { String(cString: $0) }
}

func sys_cupsCheckDestSupported(_ dest: UnsafeMutablePointer<cups_dest_t>, _ info: OpaquePointer, _ option: String,
                                _ value: String) -> Bool {
    cupsCheckDestSupported(nil, dest, info, option, value) != 0
}

func sys_cupsAddOption(_ name: String, _ value: String, _ count: CInt,
                       _ options: inout UnsafeMutablePointer<cups_option_t>?) -> CInt {
    cupsAddOption(name, value, count, &options)
}

func sys_cupsFreeOptions(_ count: CInt, _ options: UnsafeMutablePointer<cups_option_t>?) {
    cupsFreeOptions(count, options)
}

func sys_cupsCreateDestJob(_ dest: UnsafeMutablePointer<cups_dest_t>, _ info: OpaquePointer, _ jobID: inout CInt,
                           _ title: String, _ count: CInt, _ options: UnsafeMutablePointer<cups_option_t>?) -> ipp_status_t {
    cupsCreateDestJob(nil, dest, info, &jobID, title, count, options)
}

func sys_cupsStartDestDocument(_ dest: UnsafeMutablePointer<cups_dest_t>, _ info: OpaquePointer, _ jobID: CInt,
                               _ name: String, _ format: String) -> http_status_t {
    cupsStartDestDocument(nil, dest, info, jobID, name, format, 0, nil, 1)
}

func sys_cupsWriteRequestData(_ bytes: UnsafeRawBufferPointer) -> http_status_t {
    cupsWriteRequestData(nil, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
}

func sys_cupsFinishDestDocument(_ dest: UnsafeMutablePointer<cups_dest_t>, _ info: OpaquePointer) -> ipp_status_t {
    cupsFinishDestDocument(nil, dest, info)
}

func sys_cupsCancelDestJob(_ dest: UnsafeMutablePointer<cups_dest_t>, _ jobID: CInt) -> ipp_status_t {
    cupsCancelDestJob(nil, dest, jobID)
}

func sys_cupsLastError() -> ipp_status_t { cupsLastError() }

func sys_cupsLastErrorString() -> String { cupsLastErrorString().map { String(cString: $0) } ?? "" }

func sys_cupsUser() -> String { String(cString: cupsUser()) }

func sys_ippNewRequest(_ operation: ipp_op_t) -> OpaquePointer? { ippNewRequest(operation) }

func sys_ippAddString(_ ipp: OpaquePointer, _ group: ipp_tag_t, _ tag: ipp_tag_t, _ name: String, _ value: String) {
    ippAddString(ipp, group, tag, name, nil, value)
}

func sys_ippAddInteger(_ ipp: OpaquePointer, _ group: ipp_tag_t, _ tag: ipp_tag_t, _ name: String, _ value: CInt) {
    ippAddInteger(ipp, group, tag, name, value)
}

/// `values` are packed into C strings for the length of the call only.
func sys_ippAddStrings(_ ipp: OpaquePointer, _ group: ipp_tag_t, _ tag: ipp_tag_t, _ name: String, _ values: [String]) {
    let copies = values.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer<CChar>($0) }
    pointers.withUnsafeBufferPointer { buffer in
        _ = ippAddStrings(ipp, group, tag, name, CInt(buffer.count), nil, buffer.baseAddress)
    }
}

/// Sends `request` (which it frees) to `resource`; the response, or nil (cupsLastError says why).
func sys_cupsDoRequest(_ request: OpaquePointer, _ resource: String) -> OpaquePointer? {
    cupsDoRequest(nil, request, resource)
}

func sys_ippFindAttribute(_ ipp: OpaquePointer, _ name: String, _ tag: ipp_tag_t) -> OpaquePointer? {
    ippFindAttribute(ipp, name, tag)
}

func sys_ippGetCount(_ attribute: OpaquePointer) -> CInt { ippGetCount(attribute) }

func sys_ippGetInteger(_ attribute: OpaquePointer, _ element: CInt) -> CInt { ippGetInteger(attribute, element) }

func sys_ippGetString(_ attribute: OpaquePointer, _ element: CInt) -> String? {
    ippGetString(attribute, element, nil).map { String(cString: $0) }
}

func sys_ippDelete(_ ipp: OpaquePointer) { ippDelete(ipp) }

/// Not retried on EINTR: a signal ends the wait early, so that whoever waits looks at it at once.
func sys_nanosleep(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    _ = nanosleep(&request, nil)
}
