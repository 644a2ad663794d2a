import CNats
import InboxSystem
import InboxCore

/// Why an object could not be stored, read, listed or deleted.
public enum ObjectStoreError: Error, Sendable, CustomStringConvertible {
    /// A libnats call failed.
    case nats(NatsError)
    /// The bucket has no object of that name (or only its deletion marker).
    case notFound(bucket: String, name: String)
    /// Reading the content to store failed.
    case read(Errno)
    /// Writing the object's content out failed.
    case write(Errno)
    /// What the bucket holds does not add up to the object its info describes: a chunk changed or missing (the
    /// digest, the size or the count differs), or the info names no digest. What was written out must not be used.
    case corrupt(bucket: String, name: String, reason: String)
    /// A meta message that is no object info.
    case badInfo(subject: String, reason: String)
    /// A bucket that cannot be an object store: a bad name, or a stream of that name made for something else.
    case badBucket(String)

    /// One sentence naming the bucket and object where there is one.
    public var description: String {
        switch self {
        case .nats(let error): "\(error)"
        case .notFound(let bucket, let name): "\(bucket) has no object \(JSON.quote(name))"
        case .read(let error): "reading the content to store failed: \(error)"
        case .write(let error): "writing the object out failed: \(error)"
        case .corrupt(let bucket, let name, let reason): "object \(JSON.quote(name)) of \(bucket) is corrupt: \(reason)"
        case .badInfo(let subject, let reason): "\(subject) holds no object info: \(reason)"
        case .badBucket(let reason): reason
        }
    }
}

/// A JetStream object store in the layout of NATS ADR-20 (ObjectStoreLayout), which libnats 3.4 has no API for:
/// objects put from a descriptor in 128 KiB chunks, their SHA-256 computed on the way, and read back into a
/// descriptor with that digest, their size and their chunk count checked. `nats object` and every other client read
/// and write the same bucket.
public final class ObjectStore {
    /// The context it was made by, kept open while it lives.
    public let jetStream: JetStream
    /// Its stream and subjects.
    public let layout: ObjectStoreLayout

    /// A store on `layout`'s stream, which `ensure` has checked.
    private init(jetStream: JetStream, layout: ObjectStoreLayout) {
        self.jetStream = jetStream
        self.layout = layout
    }

    /// The bucket `bucket`, its stream made if there is none as ADR-20 has it (`OBJ_<bucket>`, the chunk and meta
    /// subjects, file storage, rollups and direct gets allowed, new messages refused when full). An existing stream
    /// is used as it is, if it allows rollups and direct gets and holds the bucket's subjects.
    public static func ensure(_ jetStream: JetStream, bucket: String,
                              replicas: Int = 1) throws(ObjectStoreError) -> ObjectStore {
        let layout: ObjectStoreLayout
        do { layout = try ObjectStoreLayout(bucket: bucket) } catch { throw .badBucket("\(error)") }
        let subjects = [layout.chunkSubjects, layout.metaSubjects]
        do {
            if let existing = try jetStream.stream(layout.streamName) {
                guard existing.allowRollup, existing.allowDirect, subjects.allSatisfy(existing.subjects.contains) else {
                    throw ObjectStoreError.badBucket("stream \(layout.streamName) exists but is no object store "
                                                     + "(subjects \(existing.subjects.joined(separator: " ")), rollups "
                                                     + "\(existing.allowRollup), direct gets \(existing.allowDirect))")
                }
            } else {
                try jetStream.ensureStream(JetStream.StreamSettings(name: layout.streamName, subjects: subjects,
                                                                    allowRollup: true, allowDirect: true,
                                                                    discardNew: true, replicas: replicas))
            }
        } catch let error as NatsError {
            throw .nats(error)
        } catch let error as ObjectStoreError {
            throw error
        } catch {
            throw .badBucket("\(error)")
        }
        return ObjectStore(jetStream: jetStream, layout: layout)
    }

    /// Stores what `descriptor` reads until its end as the object `name`, replacing one of that name: the chunks go
    /// to a new nuid's subject, the info after them (rolled up, so it is the only one of its name), and only then are
    /// the old object's chunks purged, so that a reader sees either the old object or the new one whole. A failure
    /// before the info is stored purges the new chunks and leaves the old object as it was; a failure to purge the old
    /// chunks is thrown with the new object stored all the same. The returned info has no `modified` time (the
    /// server's is read by `info`).
    @discardableResult
    public func put(_ name: String, from descriptor: FileDescriptor) throws(ObjectStoreError) -> ObjectInfo {
        let previous = try info(name, includingDeleted: true)
        let nuid = ObjectStoreLayout.nuid(random: RandomBits.make128())
        let chunkSubject = layout.chunkSubject(nuid: nuid)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: ObjectStoreLayout.chunkSize, alignment: 16)
        defer { chunk.deallocate() }
        var hash = SHA256()
        var size: UInt64 = 0
        var chunks = 0
        do {
            while true {
                let count = try fill(chunk, from: descriptor)
                if count == 0 { break }
                let bytes = UnsafeRawBufferPointer(rebasing: chunk[0..<count])
                hash.update(bytes)
                try publish(chunkSubject, bytes, headers: [])
                size += UInt64(count)
                chunks += 1
                if count < chunk.count { break }
            }
            let info = ObjectInfo(name: name, bucket: layout.bucket, nuid: nuid, size: size, chunks: chunks,
                                  digest: ObjectInfo.digestText(hash.finish()))
            try publishInfo(info)
            if let previous, !previous.deleted, previous.nuid != nuid {
                try purge(layout.chunkSubject(nuid: previous.nuid))
            }
            return info
        } catch {
            // A chunk whose acknowledgement was lost may be stored all the same: purge unless the new info stands.
            if (try? self.info(name))?.nuid != nuid { try? purge(chunkSubject) }
            throw error
        }
    }

    /// Writes the object `name` into `descriptor`, chunk by chunk in order, and checks what was written against its
    /// info: the chunk count, the size and the SHA-256 digest. A mismatch is `.corrupt`, raised after the bytes were
    /// written: the caller writes into a file of its own and keeps it only when this returns.
    @discardableResult
    public func get(_ name: String, into descriptor: FileDescriptor) throws(ObjectStoreError) -> ObjectInfo {
        guard let info = try info(name) else { throw .notFound(bucket: layout.bucket, name: name) }
        guard let expected = info.digestBytes else {
            throw .corrupt(bucket: layout.bucket, name: name, reason: "its info has no SHA-256 digest (\(info.digest ?? "none"))")
        }
        let subject = layout.chunkSubject(nuid: info.nuid)
        var hash = SHA256()
        var size: UInt64 = 0
        var chunks = 0
        var next: UInt64 = 1
        while true {
            let read = try jetStream.nextMessage(stream: layout.streamName, subject: subject, from: next) {
                (sequence, payload) throws(ObjectStoreError) -> UInt64 in
                if let error = descriptor.write(all: payload) { throw .write(error) }
                hash.update(payload)
                size += UInt64(payload.count)
                return sequence
            }
            guard let sequence = read else { break }
            chunks += 1
            next = sequence + 1
            if chunks > info.chunks {
                throw .corrupt(bucket: layout.bucket, name: name, reason: "more chunks than the \(info.chunks) of its info")
            }
        }
        if chunks != info.chunks {
            throw .corrupt(bucket: layout.bucket, name: name, reason: "\(chunks) chunks where its info says \(info.chunks)")
        }
        if size != info.size {
            throw .corrupt(bucket: layout.bucket, name: name, reason: "\(size) bytes where its info says \(info.size)")
        }
        let digest = hash.finish()
        if digest != expected {
            throw .corrupt(bucket: layout.bucket, name: name,
                           reason: "its content's digest is \(ObjectInfo.digestText(digest)), its info says \(info.digest ?? "")")
        }
        return info
    }

    /// The info of the object `name`, its `modified` the time the server stored it; nil when there is none, or (unless
    /// `includingDeleted`) when its info is a deletion marker.
    public func info(_ name: String, includingDeleted: Bool = false) throws(ObjectStoreError) -> ObjectInfo? {
        let subject = layout.metaSubject(name: name)
        let message: JetStream.StoredMessage?
        do { message = try jetStream.lastMessage(stream: layout.streamName, subject: subject) } catch { throw .nats(error) }
        guard let message else { return nil }
        let info: ObjectInfo
        switch ObjectInfo.parse(message.payload, modified: message.time) {
        case .success(let parsed): info = parsed
        case .failure(let error): throw .badInfo(subject: subject, reason: error.message)
        }
        return info.deleted && !includingDeleted ? nil : info
    }

    /// Deletes the object `name`: a deletion marker replaces its info (rolled up), then its chunks are purged.
    /// Deleting a deleted object does nothing; one that never was is `.notFound`.
    public func delete(_ name: String) throws(ObjectStoreError) {
        guard var info = try info(name, includingDeleted: true) else { throw .notFound(bucket: layout.bucket, name: name) }
        if info.deleted { return }
        let nuid = info.nuid
        (info.deleted, info.size, info.chunks, info.digest, info.modified) = (true, 0, 0, nil, nil)
        try publishInfo(info)
        try purge(layout.chunkSubject(nuid: nuid))
    }

    /// Removes the object `name` without a trace: its chunks, then its info, purged. For a bucket whose names are
    /// used once (a cluster's content, named by delivery id), where a deletion marker per object would be kept for
    /// ever: nobody watches for deletions there. Removing one that is not there does nothing.
    public func remove(_ name: String) throws(ObjectStoreError) {
        guard let info = try info(name, includingDeleted: true) else { return }
        if !info.deleted { try purge(layout.chunkSubject(nuid: info.nuid)) }
        try purge(layout.metaSubject(name: name))
    }

    /// The infos of every object the bucket holds, by name; deleted ones left out.
    public func list() throws(ObjectStoreError) -> [ObjectInfo] {
        let state: JetStream.StreamState?
        do { state = try jetStream.stream(layout.streamName, subjects: layout.metaSubjects) } catch { throw .nats(error) }
        var infos: [ObjectInfo] = []
        for subject in (state?.subjectCounts.keys).map(Array.init) ?? [] {
            guard let name = layout.objectName(metaSubject: subject) else {
                throw .badInfo(subject: subject, reason: "its last token is not the base64url of a name")
            }
            if let info = try info(name) { infos.append(info) }
        }
        return infos.sorted { $0.name < $1.name }
    }

    /// Reads into `buffer` until it is full or `descriptor` is at its end; how many bytes it holds.
    private func fill(_ buffer: UnsafeMutableRawBufferPointer, from descriptor: FileDescriptor) throws(ObjectStoreError) -> Int {
        var count = 0
        while count < buffer.count {
            let n: Int
            do { n = try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...])) } catch {
                throw .read(error)
            }
            if n == 0 { break }
            count += n
        }
        return count
    }

    /// Publishes to the bucket's stream (no other stream may take it) and waits for it to be stored.
    private func publish(_ subject: String, _ payload: UnsafeRawBufferPointer,
                         headers: [(name: String, value: String)]) throws(ObjectStoreError) {
        do {
            _ = try jetStream.publish(subject, payload: payload, headers: headers, expectedStream: layout.streamName)
        } catch {
            throw .nats(error)
        }
    }

    /// Publishes `info` on its meta subject with `Nats-Rollup: sub`, so that it replaces what the subject held.
    private func publishInfo(_ info: ObjectInfo) throws(ObjectStoreError) {
        do {
            _ = try jetStream.publish(layout.metaSubject(name: info.name), payload: info.json(),
                                      headers: [("Nats-Rollup", "sub")], expectedStream: layout.streamName)
        } catch {
            throw .nats(error)
        }
    }

    /// Purges every message of `subject` from the bucket's stream.
    private func purge(_ subject: String) throws(ObjectStoreError) {
        do { try jetStream.purge(stream: layout.streamName, subject: subject) } catch { throw .nats(error) }
    }
}
