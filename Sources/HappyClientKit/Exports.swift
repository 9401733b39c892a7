// One import is enough: the scene, actions, events and the other protocol
// types a client works with come from HappyCore with the kit.
@_exported import HappyCore
