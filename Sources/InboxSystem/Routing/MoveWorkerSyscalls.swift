import CShims
import Glibc

// The calls behind `MoveWorker`: its two eventfds (eventfd(2)) and its one thread (pthread_create(3)).

/// An eventfd, close-on-exec; non-blocking when `blocking` is false. -1 with errno on failure.
func sys_eventfd(blocking: Bool) -> CInt {
    inbox_eventfd(blocking ? 0 : 1)
}

/// What the new thread runs; a class so that one pointer carries it across pthread_create.
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// Starts a detached thread running `body`, with every signal blocked (they are the event loop's, through signalfd).
/// 0, or the error number pthread_create returned.
func sys_pthread_start_detached(_ body: @escaping @Sendable () -> Void) -> CInt {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var all = sigset_t(), previous = sigset_t()
    sigfillset(&all)
    // The thread inherits the creator's mask: blocked while it is made, restored here after.
    pthread_sigmask(SIG_SETMASK, &all, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, CInt(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let result = pthread_create(&thread, &attributes, { context in
        let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
        body.run()
        return nil
    }, context)
    if result != 0 { Unmanaged<ThreadBody>.fromOpaque(context).release() }
    return result
}
