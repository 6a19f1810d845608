// How the messages between loops travel between nodes (docs/cluster.md): the
// same values, as JSON of their derived Codable form; bytes (events,
// answers) as one Data value each, protobuf values as their serialized
// bytes. First version: a measured hot path moves to Proto/ as the log's
// messages did. Values only.

import Foundation
import GuildhallLoop
import GuildhallWire
import SwiftProtobuf

/// What one node sends a loop of another.
struct NodeEnvelope: Codable {
    /// The receiving node's loop.
    var toLoop: Int
    /// The sending node, and its loop (the `from` of the message, as places go).
    var fromNode: Int
    var message: NodeMessage
}

enum NodeMessage: Codable {
    case fromGateway(Int, [HomeCommand])
    case fromHome(Int, [GatewayStep])
    case mail(Int, [HomeMail])

    init?(_ m: LoopMessage) {
        switch m {
        case .fromGateway(let from, let c): self = .fromGateway(from, c)
        case .fromHome(let from, let s): self = .fromHome(from, s)
        case .mail(let from, let m): self = .mail(from, m)
        default: return nil
        }
    }

    /// As the receiving loop takes it: the sender's loop becomes its place.
    func loopMessage(fromNode node: Int) -> LoopMessage {
        switch self {
        case .fromGateway(let from, let c): .fromGateway(Place.remote(node: node, loop: from), c)
        case .fromHome(let from, let s): .fromHome(Place.remote(node: node, loop: from), s)
        case .mail(let from, let m): .mail(Place.remote(node: node, loop: from), m)
        }
    }
}

extension SharedBytes: Codable {
    public convenience init(from decoder: any Swift.Decoder) throws {
        self.init([UInt8](try decoder.singleValueContainer().decode(Data.self)))
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(Data(bytes: base, count: count))
    }
}

/// Protobuf values inside the JSON: their serialized bytes, as one Data value.
enum ProtobufInJSON {
    static func decode<M: SwiftProtobuf.Message>(_: M.Type, from decoder: any Swift.Decoder) throws -> M {
        try M(serializedBytes: [UInt8](try decoder.singleValueContainer().decode(Data.self)))
    }

    static func encode(_ m: some SwiftProtobuf.Message, to encoder: any Swift.Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(Data(try m.serializedBytes() as [UInt8]))
    }

    static func empty(_ decoder: any Swift.Decoder) -> DecodingError {
        DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "an empty oneof"))
    }
}

extension GHRequest.OneOf_Body: Codable {
    public init(from decoder: any Swift.Decoder) throws {
        guard let body = try ProtobufInJSON.decode(GHRequest.self, from: decoder).body else { throw ProtobufInJSON.empty(decoder) }
        self = body
    }

    public func encode(to encoder: any Swift.Encoder) throws { try ProtobufInJSON.encode(GHRequest.with { $0.body = self }, to: encoder) }
}

extension GHResponse.OneOf_Result: Codable {
    public init(from decoder: any Swift.Decoder) throws {
        guard let result = try ProtobufInJSON.decode(GHResponse.self, from: decoder).result else { throw ProtobufInJSON.empty(decoder) }
        self = result
    }

    public func encode(to encoder: any Swift.Encoder) throws { try ProtobufInJSON.encode(GHResponse.with { $0.result = self }, to: encoder) }
}

extension GHEvent: Codable {
    public init(from decoder: any Swift.Decoder) throws { self = try ProtobufInJSON.decode(GHEvent.self, from: decoder) }

    public func encode(to encoder: any Swift.Encoder) throws { try ProtobufInJSON.encode(self, to: encoder) }
}

extension GHReceivedRange: Codable {
    public init(from decoder: any Swift.Decoder) throws { self = try ProtobufInJSON.decode(GHReceivedRange.self, from: decoder) }

    public func encode(to encoder: any Swift.Encoder) throws { try ProtobufInJSON.encode(self, to: encoder) }
}

extension GHChannelTypers: Codable {
    public init(from decoder: any Swift.Decoder) throws { self = try ProtobufInJSON.decode(GHChannelTypers.self, from: decoder) }

    public func encode(to encoder: any Swift.Encoder) throws { try ProtobufInJSON.encode(self, to: encoder) }
}

extension GHCloseReason: Codable {
    public init(from decoder: any Swift.Decoder) throws {
        self = GHCloseReason(rawValue: try decoder.singleValueContainer().decode(Int.self)) ?? .unspecified
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}
