import CSystemd
import Glibc

/// A D-Bus connection attached to the agent's event loop (sd_bus_attach_event(3)): every reply and signal is read
/// and handled from the loop, never waited for. Calls are asynchronous (sd_bus_call_async(3)) and their replies come
/// to a closure; signals come to the closures of matches. It is a direct connection to a peer (systemd's private
/// socket): no bus daemon, no Hello, and matches are filters of this process only.
final class Bus {
    private let bus: OpaquePointer
    private var matches: [(slot: OpaquePointer, box: BusCallback)] = []
    private(set) var isOpen = true
    /// The peer went away (or the connection broke): no reply or signal comes any more.
    var disconnected: () -> Void = {}

    /// Connects to `address` (`unix:path=/run/systemd/private`) and attaches the connection to `loop`. The
    /// connect(2) to a Unix socket does not wait; authentication runs on the loop, and calls made meanwhile wait in
    /// the connection's queue.
    init(address: String, description: String, loop: EventLoop) throws(SystemError) {
        var pointer: OpaquePointer?
        var result = sys_sd_bus_new(&pointer)
        guard result >= 0, let pointer else { throw SystemError("sd_bus_new", errno: Errno(rawValue: -result)) }
        bus = pointer
        _ = sys_sd_bus_set_description(bus, description)
        result = sys_sd_bus_set_address(bus, address)
        if result >= 0 { result = sys_sd_bus_start(bus) }
        if result >= 0 { result = sys_sd_bus_attach_event(bus, loop.event, 0) }
        guard result >= 0 else {
            sys_sd_bus_flush_close_unref(bus)
            throw SystemError("sd_bus_start", path: address, errno: Errno(rawValue: -result))
        }
        // sd-bus turns the end of the connection into this local signal.
        _ = try? addMatch("type='signal',path='/org/freedesktop/DBus/Local',interface='org.freedesktop.DBus.Local',"
                          + "member='Disconnected'") { [unowned self] _ in
            self.isOpen = false
            self.disconnected()
        }
    }

    deinit {
        for match in matches { sys_sd_bus_slot_unref(match.slot) }
        sys_sd_bus_flush_close_unref(bus)
    }

    /// Calls `member` with `arguments`; `reply` gets the reply or its error, once, from the event loop (also
    /// when the connection ends first: sd-bus then makes an error reply). A call that cannot even be queued is thrown.
    func call(_ destination: String, path: String, interface: String, member: String, arguments: [BusArgument],
              reply: @escaping (Result<Void, BusError>) -> Void) throws(SystemError) {
        var message: OpaquePointer?
        var result = sys_sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard result >= 0, let message else { throw SystemError("sd_bus_message_new_method_call", errno: Errno(rawValue: -result)) }
        defer { sys_sd_bus_message_unref(message) }
        for argument in arguments where result >= 0 {
            switch argument {
            case .string(let text):
                result = text.withCString { sys_sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
            case .int32(var number):
                result = sys_sd_bus_message_append_basic(message, CChar(UInt8(ascii: "i")), &number)
            }
        }
        guard result >= 0 else { throw SystemError("sd_bus_message_append_basic", errno: Errno(rawValue: -result)) }
        // Retained for the floating slot the bus keeps; released when the reply comes.
        let box = Unmanaged.passRetained(BusCallback { message in
            if let error = message.error { reply(.failure(error)) } else { reply(.success(())) }
        })
        result = sys_sd_bus_call_async(bus, message, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            Unmanaged<BusCallback>.fromOpaque(userdata).takeRetainedValue().handle(BusMessage(message: message))
            return 0
        }, box.toOpaque(), 0)
        guard result >= 0 else {
            box.release()
            throw SystemError("sd_bus_call_async", path: "\(interface).\(member)", errno: Errno(rawValue: -result))
        }
    }

    /// Calls `handler` with each message the match rule (`type='signal',...`) selects, for the connection's life.
    func addMatch(_ rule: String, _ handler: @escaping (borrowing BusMessage) -> Void) throws(SystemError) {
        let box = BusCallback(handler)
        var slot: OpaquePointer?
        let result = sys_sd_bus_add_match(bus, &slot, rule, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            Unmanaged<BusCallback>.fromOpaque(userdata).takeUnretainedValue().handle(BusMessage(message: message))
            return 0
        }, Unmanaged.passUnretained(box).toOpaque())
        guard result >= 0, let slot else { throw SystemError("sd_bus_add_match", errno: Errno(rawValue: -result)) }
        matches.append((slot, box))
    }
}

/// An argument of a call.
enum BusArgument: ExpressibleByStringLiteral {
    case string(String)
    case int32(Int32)

    init(stringLiteral value: String) { self = .string(value) }
}

/// Holds a message callback for the C side.
private final class BusCallback {
    let handle: (borrowing BusMessage) -> Void
    init(_ handle: @escaping (borrowing BusMessage) -> Void) { self.handle = handle }
}
