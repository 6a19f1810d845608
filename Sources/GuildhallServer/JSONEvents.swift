// A loop's JSON renderings of shared event payloads, for its `guildhall.json`
// sessions: a fan-out hands every recipient the same payload in a row, so
// the last one rendered is kept and each payload is turned into JSON once
// per loop however many browsers receive it. Loop thread only.

import GuildhallLoop
import GuildhallWire

final class JSONEvents {
    struct Rendering {
        let event: JSONFrames.SharedEvent
        /// `event.body` as bytes write queues share.
        let body: SharedBytes
    }

    private var lastPayload: SharedBytes?
    private var last: Rendering?

    /// `payload` (Frame{event{...}}) rendered for JSON sessions.
    func rendering(_ payload: SharedBytes) -> Rendering {
        if let last, lastPayload === payload { return last }
        let event = JSONFrames.SharedEvent(payload: UnsafeRawBufferPointer(start: payload.base, count: payload.count))
        let made = Rendering(event: event, body: SharedBytes(event.body))
        lastPayload = payload
        last = made
        return made
    }
}
