/// Event source priorities: lower runs first, so that handler exits are never kept waiting behind a burst.
enum EventPriority {
    static let childExit: Int64 = -10
    static let intake: Int64 = 10
}
