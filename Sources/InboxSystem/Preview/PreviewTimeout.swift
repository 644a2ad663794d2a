extension PreviewRenderer.Options {
    /// A generator's time bound: the agent's `TimeoutSec=` (nil: none), but never more than a minute, so that a
    /// document built to be slow (a PDF bomb) ends in an error a person still waits for.
    public static func timeout(agent: Duration?) -> Duration {
        min(agent ?? .seconds(60), .seconds(60))
    }
}
