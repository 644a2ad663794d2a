import CSystemd
import Glibc

// The sd-event calls behind EventLoop and EventSource (sd-event(3)), one tiny function per call. Each returns what
// libsystemd returns: a negative errno on failure.

func sys_sd_event_new(_ event: inout OpaquePointer?) -> CInt { sd_event_new(&event) }

func sys_sd_event_unref(_ event: OpaquePointer) { _ = sd_event_unref(event) }

func sys_sd_event_loop(_ event: OpaquePointer) -> CInt { sd_event_loop(event) }

func sys_sd_event_exit(_ event: OpaquePointer, _ code: CInt) -> CInt { sd_event_exit(event, code) }

func sys_sd_event_add_io(_ event: OpaquePointer, _ source: inout OpaquePointer?, _ fd: CInt, _ events: UInt32,
                         _ handler: sd_event_io_handler_t, _ userdata: UnsafeMutableRawPointer) -> CInt {
    sd_event_add_io(event, &source, fd, events, handler, userdata)
}

func sys_sd_event_add_time(_ event: OpaquePointer, _ source: inout OpaquePointer?, _ clock: clockid_t,
                            _ usec: UInt64, _ accuracy: UInt64, _ handler: sd_event_time_handler_t,
                            _ userdata: UnsafeMutableRawPointer) -> CInt {
    sd_event_add_time(event, &source, clock, usec, accuracy, handler, userdata)
}

func sys_sd_event_add_time_relative(_ event: OpaquePointer, _ source: inout OpaquePointer?, _ clock: clockid_t,
                                    _ usec: UInt64, _ accuracy: UInt64, _ handler: sd_event_time_handler_t,
                                    _ userdata: UnsafeMutableRawPointer) -> CInt {
    sd_event_add_time_relative(event, &source, clock, usec, accuracy, handler, userdata)
}

func sys_sd_event_add_signal(_ event: OpaquePointer, _ source: inout OpaquePointer?, _ signal: CInt,
                             _ handler: sd_event_signal_handler_t, _ userdata: UnsafeMutableRawPointer) -> CInt {
    sd_event_add_signal(event, &source, signal, handler, userdata)
}

func sys_sd_event_add_child(_ event: OpaquePointer, _ source: inout OpaquePointer?, _ pid: pid_t, _ options: CInt,
                            _ handler: sd_event_child_handler_t, _ userdata: UnsafeMutableRawPointer) -> CInt {
    sd_event_add_child(event, &source, pid, options, handler, userdata)
}

func sys_sd_event_add_defer(_ event: OpaquePointer, _ source: inout OpaquePointer?, _ handler: sd_event_handler_t,
                            _ userdata: UnsafeMutableRawPointer) -> CInt {
    sd_event_add_defer(event, &source, handler, userdata)
}

func sys_sd_event_source_disable_unref(_ source: OpaquePointer) { _ = sd_event_source_disable_unref(source) }

func sys_sd_event_source_set_enabled(_ source: OpaquePointer, _ enabled: CInt) -> CInt {
    sd_event_source_set_enabled(source, enabled)
}

func sys_sd_event_source_set_priority(_ source: OpaquePointer, _ priority: Int64) -> CInt {
    sd_event_source_set_priority(source, priority)
}
