/// A resident handler's answer to one delivery (docs/handler-protocol.md): one message
/// `{"deliveryID": "…", "result": "done" | "retry" | "failed", "reason": "…"}`.
public struct HandlerAnswer: Sendable, Hashable {
    public enum Result: String, Sendable, Hashable, CaseIterable {
        /// Handled, as exit status 0: the Inbox copy is removed if the handler left it.
        case done
        /// Try again later, as exit status 75 (EX_TEMPFAIL).
        case retry
        /// It failed, as any other exit status: retried up to the limit, then failed/.
        case failed
    }

    public var deliveryID: String
    public var result: Result
    /// Free text for the journal; empty when the handler gave none.
    public var reason: String

    public init(deliveryID: String, result: Result, reason: String = "") {
        self.deliveryID = deliveryID
        self.result = result
        self.reason = reason
    }

    /// The largest answer read; a longer message is malformed.
    public static let maximumSize = 16 * 1024
    /// The longest reason kept; the rest is cut off.
    public static let maximumReason = 1024

    /// Reads one answer message. Unknown members are ignored, so that a handler may add its own.
    public static func parse(_ bytes: [UInt8]) -> Swift.Result<HandlerAnswer, HandlerAnswerError> {
        guard bytes.count <= maximumSize else { return .failure(.init("longer than \(maximumSize) bytes")) }
        let value: JSONValue
        switch JSONValue.parse(bytes) {
        case .success(let parsed): value = parsed
        case .failure(let error): return .failure(.init("not JSON: \(error.message)"))
        }
        guard case .object = value else { return .failure(.init("not a JSON object")) }
        guard let id = value["deliveryID"]?.string, !id.isEmpty else {
            return .failure(.init("no \"deliveryID\" string"))
        }
        guard let text = value["result"]?.string else { return .failure(.init("no \"result\" string")) }
        guard let result = Result(rawValue: text) else {
            return .failure(.init("\"result\" is '\(text.abbreviated)', not done, retry or failed"))
        }
        var reason = ""
        switch value["reason"] {
        case .string(let text)?: reason = String(text.unicodeScalars.prefix(maximumReason).map(Character.init))
        case .null?, nil: break
        default: return .failure(.init("\"reason\" is not a string"))
        }
        return .success(HandlerAnswer(deliveryID: id, result: result, reason: reason))
    }

    /// The outcome the delivery lifecycle decides on: the same as exit status 0, 75 or a failure.
    public var outcome: DeliveryOutcome {
        switch result {
        case .done: .exited(0)
        case .retry: .exited(RetryPolicy.temporaryFailureStatus)
        case .failed: .failedAnswer(reason)
        }
    }
}

/// Why a message from a resident handler is not an answer.
public struct HandlerAnswerError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
    init(_ message: String) { self.message = message }
}

extension Delivery {
    /// What a process that takes a list (%F, %U) reads on stdin: a JSON array of the deliveries' stdin objects, in
    /// the order of their arguments, followed by a newline.
    public static func batchDocument(_ deliveries: [Delivery]) -> [UInt8] {
        var document: [UInt8] = [UInt8(ascii: "[")]
        for (index, delivery) in deliveries.enumerated() {
            if index > 0 { document.append(UInt8(ascii: ",")) }
            var object = delivery.stdinDocument()
            if object.last == UInt8(ascii: "\n") { object.removeLast() }
            document += object
        }
        document += Array("]\n".utf8)
        return document
    }
}
