import Glibc
import InboxCore

extension Agent {
    /// Reads handlers.d and defaults.conf again, then routes what waits for handlers that changed.
    func reload(reason: String) {
        guard phase == .running else { return }
        notifier.reloading()
        logger.log(.debug, "Reloading registrations (\(reason))")
        // A journald restarted since the last load would leave handler output on dead streams.
        logger.resetStreams()
        reloadRegistrations()
        watchHandlerDirectories()
        // Waiting deliveries of handlers that are gone find a new handler or go to unhandled/.
        let orphans = queue.removeAll { [unowned self] handler in self.registrations.registration(handler) == nil }
        for delivery in orphans { reroute(delivery) }
        redispatchUnhandled()
        notifier.ready(status: statusLine())
        launchReady()
    }

    func reloadRegistrations() {
        let (mime, problems) = MIMEDatabaseLoader.load(directories: settings.mimeDirectories)
        for problem in problems {
            logger.log(.warning, "MIME database: \(problem)")
        }
        reportedCarrierMismatches.removeAll()
        let loaded = RegistrationLoader.load(directories: settings.handlerDirectories, mime: mime)
        for diagnostic in loaded.diagnostics {
            // A binary Info.plist has no lines: its diagnostics name a key path (CONFIG_POSITION) instead.
            let location = diagnostic.location
            logger.log(diagnostic.severity == .error ? .error : .warning, diagnostic.description,
                       event: .registrationError, fields: [
                "CONFIG_FILE": location.file, "CONFIG_LINE": location.line > 0 ? String(location.line) : nil,
                "CONFIG_POSITION": location.position.flatMap { $0.isEmpty ? nil : $0 }])
        }
        let identities = HandlerIdentities.resolve(loaded.registrations, isRoot: isRoot, containersPath: containersRoot.path)
        for case let (handler, .failure(error)) in identities {
            let path = loaded.registration(handler)?.path
            logger.log(.error, "\(path ?? handler): \(error); deliveries to \(handler) will fail",
                       event: .registrationError, fields: ["CONFIG_FILE": path])
        }
        self.identities = identities
        registrations = loaded
        chainCache.removeAll()
        rulesets.removeAll()
        preferences = loadPreferences()
        registrationsLoadedAt = EventLoop.now()
        logger.log(.info, "Loaded \(loaded.registrations.count) registration(s), \(loaded.rejected.count) rejected, \(loaded.masked.count) masked",
                   event: .registrationsLoaded, fields: [
            "INBOX_HANDLERS": loaded.registrations.map(\.identifier).joined(separator: " "),
            "INBOX_REJECTED": loaded.rejected.isEmpty ? nil : loaded.rejected.joined(separator: " ")])
    }

    func loadPreferences() -> HandlerPreferences {
        let (preferences, diagnostics, problem) = Preferences.load(settings.defaultsFile)
        for diagnostic in diagnostics {
            logger.log(.warning, diagnostic.description, event: .registrationError, fields: [
                "CONFIG_FILE": diagnostic.location.file, "CONFIG_LINE": String(diagnostic.location.line)])
        }
        if let problem, let path = settings.defaultsFile {
            logger.log(.warning, problem, event: .registrationError, fields: ["CONFIG_FILE": path])
        }
        return preferences
    }

    /// Watches each existing handlers.d directory; a change reloads after a short pause so an
    /// editor's save (write, rename, chmod) is one reload.
    func watchHandlerDirectories() {
        for watch in handlerWatches { inotify.removeWatch(watch) }
        handlerWatches.removeAll()
        for path in settings.handlerDirectories {
            if let watch = try? inotify.addWatch(path, mask: [.closeWrite, .movedTo, .movedFrom, .create, .delete, .attrib]) {
                handlerWatches.insert(watch)
            }
        }
    }

    func scheduleReload() {
        guard reloadTimer == nil else { return }
        reloadTimer = try? loop.addTimer(after: .milliseconds(100), accuracy: .milliseconds(10)) { [unowned self] in
            self.reloadTimer = nil
            self.reload(reason: "handlers.d changed")
        }
    }
}
