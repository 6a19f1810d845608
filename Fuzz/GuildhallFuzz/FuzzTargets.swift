// libFuzzer targets (docs/reliability.md B4): the frame decoder, the hand-written send
// decoder, the WebSocket frame reader, the hand-written reader of an event's
// message place and the PROXY header reader, one binary, the target chosen by
// GUILDHALL_FUZZ_TARGET (frames, send, websocket, place, proxy). Built only by `make fuzz`
// (Package.swift adds this target when GUILDHALL_FUZZ is set) with
// `-sanitize=fuzzer,address`: libFuzzer's driver runs from the entry point
// SwiftPM gives an executable (`guildhall_fuzz_main`; libFuzzer's own main
// is then not linked) and feeds `LLVMFuzzerTestOneInput`. Each target checks properties, not only "no
// crash": an input split at any point decodes as it does whole; the
// hand-written send and acknowledgement readers agree with swift-protobuf's wherever they answer,
// and the place reader wherever swift-protobuf does;
// nothing decoded exceeds its limit. A broken property traps, which libFuzzer
// reports as a finding with the input that caused it.

import Foundation
import GuildhallLoop
import GuildhallWire

enum FuzzTarget: String {
    case frames, send, websocket, place, proxy
}

let fuzzTarget = FuzzTarget(rawValue: ProcessInfo.processInfo.environment["GUILDHALL_FUZZ_TARGET"] ?? "frames") ?? .frames

/// libFuzzer's driver (its runtime, linked by -sanitize=fuzzer).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

@_cdecl("guildhall_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    switch fuzzTarget {
    case .frames: FrameProperties.check(bytes)
    case .send: SendProperties.check(bytes)
    case .websocket: WebSocketProperties.check(bytes)
    case .place: MessagePlaceProperties.check(bytes)
    case .proxy: ProxyHeaderProperties.check(bytes)
    }
    return 0
}

/// The split point an input picks for itself: its first byte, scaled to its length.
func splitPoint(_ bytes: [UInt8]) -> Int { bytes.isEmpty ? 0 : Int(bytes[0]) * bytes.count / 256 }
