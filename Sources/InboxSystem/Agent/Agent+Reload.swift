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
        var identities: [String: Result<Identity, Identity.LookupError>] = [:]
        for registration in loaded.registrations where registration.user != nil || registration.group != nil {
            do throws(Identity.LookupError) {
                let identity = try Identity.resolve(user: registration.user ?? currentUserName(), group: registration.group)
                identities[registration.identifier] = .success(identity)
            } catch {
                identities[registration.identifier] = .failure(error)
                logger.log(.error, "\(registration.path): \(error); deliveries to \(registration.identifier) will fail",
                           event: .registrationError, fields: ["CONFIG_FILE": registration.path])
            }
        }
        if isRoot {
            // A handler without User= never runs as root: it gets an identity of its own.
            let unnamed = loaded.registrations.filter { $0.user == nil && $0.group == nil }.map(\.identifier)
            let dynamic = DynamicIdentity.allocate(unnamed, containers: containersRoot) { [containersRoot] handler in
                containersRoot.child(handler) + "/Documents"
            }
            for (handler, identity) in dynamic { identities[handler] = .success(identity) }
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

    func currentUserName() -> String {
        guard let entry = getpwuid(geteuid()) else { return String(geteuid()) }
        return String(cString: entry.pointee.pw_name)
    }
}
