import Glibc

/// Process-wide signal mask handling; call before any thread is started.
public enum Signals {
    /// Blocks the signals the event loop takes through signalfd (sd_event_add_signal(3)).
    public static func block(_ signals: [CInt]) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        // pthread_sigmask only fails for a bad `how`; nothing to handle.
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Ignores SIGPIPE so a vanished journal or reader turns into EPIPE, not death.
    public static func ignorePipe() {
        _ = signal(SIGPIPE, SIG_IGN)
    }
}
