// One import is enough: the scene, actions, events and the other protocol
// types a client works with come from HappyCore with the kit, and the
// transport seam (URLs, options, `HappyTransport`) from HappyClientTransport.
@_exported import HappyCore
@_exported import HappyClientTransport
#if os(Linux)
// The libwebsockets transport (`ClientLoop`, `WebSocketConnection`), the default on Linux.
@_exported import HappyClientLWS
#endif
