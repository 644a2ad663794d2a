import CNats
import InboxSystem
import Glibc

// libnats (the NATS C client, nats.h), one wrapper per call. Each returns libnats's status as it is; the types above
// turn a failure into a NatsError with nats_GetLastError's text, which libnats keeps per thread: the cluster layer is
// used from one thread, so the text read after a failed call is that call's. Strings passed as `String` live for the
// call; the configuration structs' pointers come from a CStringPool that outlives it.

// MARK: The library and its errors

func sys_nats_GetLastError() -> (natsStatus, String?) {
    var status = NATS_OK
    let text = nats_GetLastError(&status).map { String(cString: $0) }
    return (status, text)
}

func sys_natsStatus_GetText(_ status: natsStatus) -> String { String(cString: natsStatus_GetText(status)) }

func sys_nats_GetVersion() -> String { String(cString: nats_GetVersion()) }

// MARK: Options and the connection

func sys_natsOptions_Create(_ options: inout OpaquePointer?) -> natsStatus { natsOptions_Create(&options) }

func sys_natsOptions_Destroy(_ options: OpaquePointer) { natsOptions_Destroy(options) }

func sys_natsOptions_SetServers(_ options: OpaquePointer, _ servers: UnsafeMutablePointer<UnsafePointer<CChar>?>,
                                _ count: Int) -> natsStatus {
    natsOptions_SetServers(options, servers, CInt(count))
}

func sys_natsOptions_SetNoRandomize(_ options: OpaquePointer, _ noRandomize: Bool) -> natsStatus {
    natsOptions_SetNoRandomize(options, noRandomize)
}

func sys_natsOptions_SetName(_ options: OpaquePointer, _ name: String) -> natsStatus { natsOptions_SetName(options, name) }

func sys_natsOptions_SetTimeout(_ options: OpaquePointer, _ milliseconds: Int64) -> natsStatus {
    natsOptions_SetTimeout(options, milliseconds)
}

func sys_natsOptions_SetMaxReconnect(_ options: OpaquePointer, _ count: CInt) -> natsStatus {
    natsOptions_SetMaxReconnect(options, count)
}

func sys_natsOptions_SetReconnectWait(_ options: OpaquePointer, _ milliseconds: Int64) -> natsStatus {
    natsOptions_SetReconnectWait(options, milliseconds)
}

func sys_natsOptions_SetUserInfo(_ options: OpaquePointer, _ user: String, _ password: String) -> natsStatus {
    natsOptions_SetUserInfo(options, user, password)
}

func sys_natsOptions_SetToken(_ options: OpaquePointer, _ token: String) -> natsStatus {
    natsOptions_SetToken(options, token)
}

func sys_natsOptions_SetUserCredentialsFromFiles(_ options: OpaquePointer, _ credentials: String,
                                                 _ seed: String?) -> natsStatus {
    natsOptions_SetUserCredentialsFromFiles(options, credentials, seed)
}

func sys_natsOptions_SetNKeyFromSeed(_ options: OpaquePointer, _ publicKey: String, _ seedFile: String) -> natsStatus {
    natsOptions_SetNKeyFromSeed(options, publicKey, seedFile)
}

func sys_natsOptions_SetSecure(_ options: OpaquePointer, _ secure: Bool) -> natsStatus {
    natsOptions_SetSecure(options, secure)
}

func sys_natsOptions_LoadCATrustedCertificates(_ options: OpaquePointer, _ file: String) -> natsStatus {
    natsOptions_LoadCATrustedCertificates(options, file)
}

func sys_natsOptions_LoadCertificatesChain(_ options: OpaquePointer, _ certificate: String, _ key: String) -> natsStatus {
    natsOptions_LoadCertificatesChain(options, certificate, key)
}

func sys_natsOptions_SetExpectedHostname(_ options: OpaquePointer, _ hostname: String) -> natsStatus {
    natsOptions_SetExpectedHostname(options, hostname)
}

func sys_natsConnection_Connect(_ connection: inout OpaquePointer?, _ options: OpaquePointer) -> natsStatus {
    natsConnection_Connect(&connection, options)
}

func sys_natsConnection_Close(_ connection: OpaquePointer) { natsConnection_Close(connection) }

func sys_natsConnection_Destroy(_ connection: OpaquePointer) { natsConnection_Destroy(connection) }

func sys_natsConnection_FlushTimeout(_ connection: OpaquePointer, _ milliseconds: Int64) -> natsStatus {
    natsConnection_FlushTimeout(connection, milliseconds)
}

func sys_natsConnection_Publish(_ connection: OpaquePointer, _ subject: String, _ data: UnsafeRawBufferPointer)
    -> natsStatus {
    natsConnection_Publish(connection, subject, data.baseAddress, CInt(clamping: data.count))
}

func sys_natsConnection_SubscribeSync(_ subscription: inout OpaquePointer?, _ connection: OpaquePointer,
                                      _ subject: String) -> natsStatus {
    natsConnection_SubscribeSync(&subscription, connection, subject)
}

func sys_natsSubscription_NextMsg(_ message: inout OpaquePointer?, _ subscription: OpaquePointer,
                                  _ milliseconds: Int64) -> natsStatus {
    natsSubscription_NextMsg(&message, subscription, milliseconds)
}

func sys_natsConnection_Status(_ connection: OpaquePointer) -> natsConnStatus { natsConnection_Status(connection) }

/// The URL of the server the connection is on, nil while it is not on one.
func sys_natsConnection_GetConnectedUrl(_ connection: OpaquePointer) -> String? {
    var buffer = [CChar](repeating: 0, count: 512)
    guard natsConnection_GetConnectedUrl(connection, &buffer, buffer.count) == NATS_OK, buffer[0] != 0 else { return nil }
    return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}

// MARK: JetStream: the context, streams, stored messages

func sys_jsOptions_Init(_ options: inout jsOptions) -> natsStatus { jsOptions_Init(&options) }

func sys_natsConnection_JetStream(_ context: inout OpaquePointer?, _ connection: OpaquePointer,
                                  _ options: inout jsOptions) -> natsStatus {
    natsConnection_JetStream(&context, connection, &options)
}

func sys_jsCtx_Destroy(_ context: OpaquePointer) { jsCtx_Destroy(context) }

func sys_jsStreamConfig_Init(_ config: inout jsStreamConfig) -> natsStatus { jsStreamConfig_Init(&config) }

func sys_js_AddStream(_ info: inout UnsafeMutablePointer<jsStreamInfo>?, _ context: OpaquePointer,
                      _ config: inout jsStreamConfig, _ errorCode: inout jsErrCode) -> natsStatus {
    js_AddStream(&info, context, &config, nil, &errorCode)
}

func sys_js_UpdateStream(_ info: inout UnsafeMutablePointer<jsStreamInfo>?, _ context: OpaquePointer,
                         _ config: inout jsStreamConfig, _ errorCode: inout jsErrCode) -> natsStatus {
    js_UpdateStream(&info, context, &config, nil, &errorCode)
}

/// `options` may ask for the stream's subjects (`Stream.Info.SubjectsFilter`).
func sys_js_GetStreamInfo(_ info: inout UnsafeMutablePointer<jsStreamInfo>?, _ context: OpaquePointer, _ stream: String,
                          _ options: inout jsOptions, _ errorCode: inout jsErrCode) -> natsStatus {
    js_GetStreamInfo(&info, context, stream, &options, &errorCode)
}

func sys_jsStreamInfo_Destroy(_ info: UnsafeMutablePointer<jsStreamInfo>) { jsStreamInfo_Destroy(info) }

func sys_js_DeleteStream(_ context: OpaquePointer, _ stream: String, _ errorCode: inout jsErrCode) -> natsStatus {
    js_DeleteStream(context, stream, nil, &errorCode)
}

/// `options` may narrow the purge to a subject (`Stream.Purge.Subject`).
func sys_js_PurgeStream(_ context: OpaquePointer, _ stream: String, _ options: inout jsOptions,
                        _ errorCode: inout jsErrCode) -> natsStatus {
    js_PurgeStream(context, stream, &options, &errorCode)
}

func sys_js_GetMsg(_ message: inout OpaquePointer?, _ context: OpaquePointer, _ stream: String, _ sequence: UInt64,
                   _ errorCode: inout jsErrCode) -> natsStatus {
    js_GetMsg(&message, context, stream, sequence, nil, &errorCode)
}

func sys_js_GetLastMsg(_ message: inout OpaquePointer?, _ context: OpaquePointer, _ stream: String, _ subject: String,
                       _ errorCode: inout jsErrCode) -> natsStatus {
    js_GetLastMsg(&message, context, stream, subject, nil, &errorCode)
}

func sys_jsDirectGetMsgOptions_Init(_ options: inout jsDirectGetMsgOptions) -> natsStatus {
    jsDirectGetMsgOptions_Init(&options)
}

func sys_js_DirectGetMsg(_ message: inout OpaquePointer?, _ context: OpaquePointer, _ stream: String,
                         _ options: inout jsDirectGetMsgOptions) -> natsStatus {
    js_DirectGetMsg(&message, context, stream, nil, &options)
}

func sys_js_DeleteMsg(_ context: OpaquePointer, _ stream: String, _ sequence: UInt64,
                      _ errorCode: inout jsErrCode) -> natsStatus {
    js_DeleteMsg(context, stream, sequence, nil, &errorCode)
}

// MARK: Messages and publishing

func sys_natsMsg_Create(_ message: inout OpaquePointer?, _ subject: String, _ payload: UnsafeRawBufferPointer) -> natsStatus {
    natsMsg_Create(&message, subject, nil, payload.baseAddress?.assumingMemoryBound(to: CChar.self), CInt(payload.count))
}

func sys_natsMsg_Destroy(_ message: OpaquePointer) { natsMsg_Destroy(message) }

func sys_natsMsgHeader_Add(_ message: OpaquePointer, _ key: String, _ value: String) -> natsStatus {
    natsMsgHeader_Add(message, key, value)
}

/// The first value of `key`, nil when the message has no such header.
func sys_natsMsgHeader_Get(_ message: OpaquePointer, _ key: String) -> String? {
    var value: UnsafePointer<CChar>?
    guard natsMsgHeader_Get(message, key, &value) == NATS_OK else { return nil }
    return value.map { String(cString: $0) } ?? ""
}

/// Every header of the message with its values in order, keys as the sender wrote them.
func sys_natsMsgHeader_Keys(_ message: OpaquePointer) -> [String] {
    var keys: UnsafeMutablePointer<UnsafePointer<CChar>?>?
    var count: CInt = 0
    guard natsMsgHeader_Keys(message, &keys, &count) == NATS_OK, let keys else { return [] }
    defer { free(keys) }
    return (0..<Int(count)).compactMap { keys[$0].map { String(cString: $0) } }
}

func sys_natsMsgHeader_Values(_ message: OpaquePointer, _ key: String) -> [String] {
    var values: UnsafeMutablePointer<UnsafePointer<CChar>?>?
    var count: CInt = 0
    guard natsMsgHeader_Values(message, key, &values, &count) == NATS_OK, let values else { return [] }
    defer { free(values) }
    return (0..<Int(count)).map { values[$0].map { String(cString: $0) } ?? "" }
}

func sys_natsMsg_GetSubject(_ message: OpaquePointer) -> String {
    natsMsg_GetSubject(message).map { String(cString: $0) } ?? ""
}

/// The payload, copied out of the message.
func sys_natsMsg_GetData(_ message: OpaquePointer) -> [UInt8] {
    let count = Int(natsMsg_GetDataLength(message))
    guard count > 0, let data = natsMsg_GetData(message) else { return [] }
    return [UInt8](UnsafeRawBufferPointer(start: data, count: count))
}

/// The payload in place, for as long as the message lives.
func sys_natsMsg_GetDataBuffer(_ message: OpaquePointer) -> UnsafeRawBufferPointer {
    let count = Int(natsMsg_GetDataLength(message))
    guard count > 0, let data = natsMsg_GetData(message) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
    return UnsafeRawBufferPointer(start: data, count: count)
}

func sys_natsMsg_GetSequence(_ message: OpaquePointer) -> UInt64 { natsMsg_GetSequence(message) }

func sys_natsMsg_GetTime(_ message: OpaquePointer) -> Int64 { natsMsg_GetTime(message) }

func sys_jsPubOptions_Init(_ options: inout jsPubOptions) -> natsStatus { jsPubOptions_Init(&options) }

func sys_js_PublishMsg(_ ack: inout UnsafeMutablePointer<jsPubAck>?, _ context: OpaquePointer, _ message: OpaquePointer,
                       _ options: inout jsPubOptions, _ errorCode: inout jsErrCode) -> natsStatus {
    js_PublishMsg(&ack, context, message, &options, &errorCode)
}

func sys_jsPubAck_Destroy(_ ack: UnsafeMutablePointer<jsPubAck>) { jsPubAck_Destroy(ack) }

// MARK: Consumers, pull subscriptions, acknowledgements

func sys_jsConsumerConfig_Init(_ config: inout jsConsumerConfig) -> natsStatus { jsConsumerConfig_Init(&config) }

func sys_js_AddConsumer(_ info: inout UnsafeMutablePointer<jsConsumerInfo>?, _ context: OpaquePointer, _ stream: String,
                        _ config: inout jsConsumerConfig, _ errorCode: inout jsErrCode) -> natsStatus {
    js_AddConsumer(&info, context, stream, &config, nil, &errorCode)
}

func sys_js_UpdateConsumer(_ info: inout UnsafeMutablePointer<jsConsumerInfo>?, _ context: OpaquePointer,
                           _ stream: String, _ config: inout jsConsumerConfig, _ errorCode: inout jsErrCode) -> natsStatus {
    js_UpdateConsumer(&info, context, stream, &config, nil, &errorCode)
}

func sys_js_GetConsumerInfo(_ info: inout UnsafeMutablePointer<jsConsumerInfo>?, _ context: OpaquePointer,
                            _ stream: String, _ consumer: String, _ errorCode: inout jsErrCode) -> natsStatus {
    js_GetConsumerInfo(&info, context, stream, consumer, nil, &errorCode)
}

func sys_jsConsumerInfo_Destroy(_ info: UnsafeMutablePointer<jsConsumerInfo>) { jsConsumerInfo_Destroy(info) }

func sys_jsSubOptions_Init(_ options: inout jsSubOptions) -> natsStatus { jsSubOptions_Init(&options) }

/// Binds to the consumer `options` names (`Stream`, `Consumer`): no subject, nothing created.
func sys_js_PullSubscribe(_ subscription: inout OpaquePointer?, _ context: OpaquePointer, _ options: inout jsSubOptions,
                          _ errorCode: inout jsErrCode) -> natsStatus {
    js_PullSubscribe(&subscription, context, nil, nil, nil, &options, &errorCode)
}

func sys_natsSubscription_Fetch(_ list: inout natsMsgList, _ subscription: OpaquePointer, _ batch: CInt,
                                _ milliseconds: Int64, _ errorCode: inout jsErrCode) -> natsStatus {
    natsSubscription_Fetch(&list, subscription, batch, milliseconds, &errorCode)
}

/// Destroys the messages still in the list (those the caller took are set to nil first) and its array.
func sys_natsMsgList_Destroy(_ list: inout natsMsgList) { natsMsgList_Destroy(&list) }

func sys_natsSubscription_Destroy(_ subscription: OpaquePointer) { natsSubscription_Destroy(subscription) }

func sys_natsMsg_GetMetaData(_ metadata: inout UnsafeMutablePointer<jsMsgMetaData>?, _ message: OpaquePointer) -> natsStatus {
    natsMsg_GetMetaData(&metadata, message)
}

func sys_jsMsgMetaData_Destroy(_ metadata: UnsafeMutablePointer<jsMsgMetaData>) { jsMsgMetaData_Destroy(metadata) }

func sys_natsMsg_AckSync(_ message: OpaquePointer, _ options: inout jsOptions, _ errorCode: inout jsErrCode) -> natsStatus {
    natsMsg_AckSync(message, &options, &errorCode)
}

func sys_natsMsg_NakWithDelay(_ message: OpaquePointer, _ milliseconds: Int64, _ options: inout jsOptions) -> natsStatus {
    natsMsg_NakWithDelay(message, milliseconds, &options)
}

func sys_natsMsg_InProgress(_ message: OpaquePointer, _ options: inout jsOptions) -> natsStatus {
    natsMsg_InProgress(message, &options)
}

func sys_natsMsg_Term(_ message: OpaquePointer, _ options: inout jsOptions) -> natsStatus { natsMsg_Term(message, &options) }

// MARK: Key-value buckets

func sys_kvConfig_Init(_ config: inout kvConfig) -> natsStatus { kvConfig_Init(&config) }

func sys_js_CreateKeyValue(_ store: inout OpaquePointer?, _ context: OpaquePointer, _ config: inout kvConfig) -> natsStatus {
    js_CreateKeyValue(&store, context, &config)
}

func sys_js_KeyValue(_ store: inout OpaquePointer?, _ context: OpaquePointer, _ bucket: String) -> natsStatus {
    js_KeyValue(&store, context, bucket)
}

func sys_kvStore_Destroy(_ store: OpaquePointer) { kvStore_Destroy(store) }

func sys_kvStore_Put(_ revision: inout UInt64, _ store: OpaquePointer, _ key: String,
                     _ value: UnsafeRawBufferPointer) -> natsStatus {
    kvStore_Put(&revision, store, key, value.baseAddress, CInt(value.count))
}

func sys_kvStore_Get(_ entry: inout OpaquePointer?, _ store: OpaquePointer, _ key: String) -> natsStatus {
    kvStore_Get(&entry, store, key)
}

func sys_kvStore_Delete(_ store: OpaquePointer, _ key: String) -> natsStatus { kvStore_Delete(store, key) }

func sys_kvWatchOptions_Init(_ options: inout kvWatchOptions) -> natsStatus { kvWatchOptions_Init(&options) }

/// Every key with a value; NATS_NOT_FOUND when there is none.
func sys_kvStore_Keys(_ store: OpaquePointer, _ options: inout kvWatchOptions) -> (natsStatus, [String]) {
    var list = kvKeysList()
    let status = kvStore_Keys(&list, store, &options)
    defer { kvKeysList_Destroy(&list) }
    guard status == NATS_OK, let keys = list.Keys else { return (status, []) }
    return (status, (0..<Int(list.Count)).compactMap { keys[$0].map { String(cString: $0) } })
}

/// The value, copied out of the entry.
func sys_kvEntry_Value(_ entry: OpaquePointer) -> [UInt8] {
    let count = Int(kvEntry_ValueLen(entry))
    guard count > 0, let value = kvEntry_Value(entry) else { return [] }
    return [UInt8](UnsafeRawBufferPointer(start: value, count: count))
}

func sys_kvEntry_Revision(_ entry: OpaquePointer) -> UInt64 { kvEntry_Revision(entry) }

func sys_kvEntry_Created(_ entry: OpaquePointer) -> Int64 { kvEntry_Created(entry) }

func sys_kvEntry_Destroy(_ entry: OpaquePointer) { kvEntry_Destroy(entry) }
