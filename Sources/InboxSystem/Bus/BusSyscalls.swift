import CSystemd
import Glibc

// The sd-bus and sd-daemon calls behind Bus and BusMessage (sd-bus(3), sd_booted(3)), one tiny function per call.
// Each returns what libsystemd returns: a negative errno on failure.

func sys_sd_booted() -> CInt { sd_booted() }

func sys_sd_bus_new(_ bus: inout OpaquePointer?) -> CInt { sd_bus_new(&bus) }

func sys_sd_bus_set_address(_ bus: OpaquePointer, _ address: String) -> CInt { sd_bus_set_address(bus, address) }

func sys_sd_bus_set_description(_ bus: OpaquePointer, _ description: String) -> CInt {
    sd_bus_set_description(bus, description)
}

func sys_sd_bus_start(_ bus: OpaquePointer) -> CInt { sd_bus_start(bus) }

func sys_sd_bus_attach_event(_ bus: OpaquePointer, _ event: OpaquePointer, _ priority: CInt) -> CInt {
    sd_bus_attach_event(bus, event, priority)
}

func sys_sd_bus_flush_close_unref(_ bus: OpaquePointer) { _ = sd_bus_flush_close_unref(bus) }

func sys_sd_bus_add_match(_ bus: OpaquePointer, _ slot: inout OpaquePointer?, _ match: String,
                          _ handler: sd_bus_message_handler_t, _ userdata: UnsafeMutableRawPointer) -> CInt {
    sd_bus_add_match(bus, &slot, match, handler, userdata)
}

func sys_sd_bus_slot_unref(_ slot: OpaquePointer) { _ = sd_bus_slot_unref(slot) }

func sys_sd_bus_message_new_method_call(_ bus: OpaquePointer, _ message: inout OpaquePointer?, _ destination: String,
                                        _ path: String, _ interface: String, _ member: String) -> CInt {
    sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
}

func sys_sd_bus_message_append_basic(_ message: OpaquePointer, _ type: CChar, _ value: UnsafeRawPointer) -> CInt {
    sd_bus_message_append_basic(message, type, value)
}

/// A floating call: the bus owns its slot, and `handler` is called once with the reply (or an error made for it).
func sys_sd_bus_call_async(_ bus: OpaquePointer, _ message: OpaquePointer, _ handler: sd_bus_message_handler_t,
                           _ userdata: UnsafeMutableRawPointer, _ usec: UInt64) -> CInt {
    sd_bus_call_async(bus, nil, message, handler, userdata, usec)
}

func sys_sd_bus_message_unref(_ message: OpaquePointer) { _ = sd_bus_message_unref(message) }

func sys_sd_bus_message_get_error(_ message: OpaquePointer) -> UnsafePointer<sd_bus_error>? {
    sd_bus_message_get_error(message)
}

func sys_sd_bus_message_get_path(_ message: OpaquePointer) -> UnsafePointer<CChar>? { sd_bus_message_get_path(message) }

func sys_sd_bus_message_get_member(_ message: OpaquePointer) -> UnsafePointer<CChar>? {
    sd_bus_message_get_member(message)
}

func sys_sd_bus_message_read_basic(_ message: OpaquePointer, _ type: CChar, _ value: UnsafeMutableRawPointer) -> CInt {
    sd_bus_message_read_basic(message, type, value)
}

func sys_sd_bus_message_enter_container(_ message: OpaquePointer, _ type: CChar, _ contents: String) -> CInt {
    sd_bus_message_enter_container(message, type, contents)
}

func sys_sd_bus_message_exit_container(_ message: OpaquePointer) -> CInt { sd_bus_message_exit_container(message) }

func sys_sd_bus_message_skip(_ message: OpaquePointer, _ types: String) -> CInt { sd_bus_message_skip(message, types) }

func sys_sd_bus_message_peek_type(_ message: OpaquePointer, _ type: inout CChar,
                                  _ contents: inout UnsafePointer<CChar>?) -> CInt {
    sd_bus_message_peek_type(message, &type, &contents)
}
