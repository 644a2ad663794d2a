/// The version both executables report (`inboxd --version`, `inboxctl --version`).
public let inboxdVersion = "0.1.0"
