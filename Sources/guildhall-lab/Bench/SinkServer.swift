// `guildhall-lab bench sink-server`: the trivial sink. Each connection asks
// "SINK N\n" and gets N framed records as fast as the socket takes them,
// from one prebuilt buffer, so the load generator's own ceiling shows.

import ArgumentParser
import Foundation
import GuildhallLoop

struct SinkServer: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sink-server", abstract: "The trivial sink (used by bench).",
                                                    shouldDisplay: false)

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let loop = EventLoop()
        let framesPerBuffer = 512
        var bytes: [UInt8] = []
        var record: [UInt8] = []
        for i in 0..<framesPerBuffer {
            BenchRecord.make(size: 100, publisher: 0, seq: UInt64(i), sentNanos: 0, into: &record)
            bytes += [0, 0, 0, UInt8(record.count + 3), 0x1A, 0x00, 0x00] + record
        }
        let buffer = SharedBytes(bytes)
        let frameSize = bytes.count / framesPerBuffer
        var streams: [ObjectIdentifier: SinkStream] = [:]
        let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0) { conn in
            let stream = SinkStream(conn: conn, buffer: buffer, frameSize: frameSize, framesPerBuffer: framesPerBuffer)
            streams[ObjectIdentifier(conn)] = stream
            conn.onEnd = { _ in
                streams.removeValue(forKey: ObjectIdentifier(conn))
                conn.abort()
            }
            conn.onRead = { chunk in stream.request(chunk) }
            conn.onWritten = { _ in stream.pump() }
            conn.startReading()
        }
        print("sink listening on 127.0.0.1:\(listener.port)")
        fflush(nil)
        let stop = SignalWatcher(loop: loop, signal: SIGTERM) { _ in loop.stop() }
        _ = stop
        loop.run()
    }
}

final class SinkStream {
    let conn: TCPConnection
    let buffer: SharedBytes
    let frameSize: Int
    let framesPerBuffer: Int
    var remaining = 0
    var line: [UInt8] = []

    init(conn: TCPConnection, buffer: SharedBytes, frameSize: Int, framesPerBuffer: Int) {
        self.conn = conn; self.buffer = buffer; self.frameSize = frameSize; self.framesPerBuffer = framesPerBuffer
    }

    func request(_ chunk: UnsafeRawBufferPointer) {
        for b in chunk {
            if b == 10 {
                let text = String(decoding: line, as: UTF8.self)
                line.removeAll()
                if text.hasPrefix("SINK "), let n = Int(text.dropFirst(5)) { remaining += n; pump() }
            } else {
                line.append(b)
            }
        }
    }

    /// Keeps a few buffers in flight until the request is served.
    func pump() {
        while remaining > 0 && conn.queuedBytes < 4 * buffer.count {
            if remaining >= framesPerBuffer {
                conn.enqueue(shared: buffer)
                remaining -= framesPerBuffer
            } else {
                let tail = Array(UnsafeRawBufferPointer(start: buffer.base, count: remaining * frameSize))
                conn.enqueue(tail)
                remaining = 0
            }
        }
        conn.flush()
    }
}
