// The "loop thread only" rule, checked in debug builds: a call on the loop's
// own thread passes, one from another thread while the loop runs stops the
// process (an exit test, in a child process of its own).

import Foundation
import Testing
@testable import GuildhallLoop

@Suite struct LoopConfinementTests {
    /// Runs a loop on a thread of its own until `body` has run on this one, then stops it.
    static func whileRunning(_ body: (EventLoop) -> Void) {
        let loop = EventLoop()
        let started = DispatchSemaphore(value: 0)
        let timer = LoopTimer(loop: loop)
        timer.start(afterMillis: 0, repeatMillis: 10) {
            loop.assertOnLoop()  // on the loop's thread: passes
            started.signal()
        }
        nonisolated(unsafe) let shared = loop
        let thread = Thread { shared.run() }
        thread.start()
        started.wait()
        body(loop)
    }

    @Test func theLoopsOwnThreadPasses() {
        let done = DispatchSemaphore(value: 0)
        let loop = EventLoop()
        let timer = LoopTimer(loop: loop)
        var checked = false
        timer.start(afterMillis: 0, repeatMillis: 0) {
            loop.assertOnLoop()
            checked = true
            timer.close()
            done.signal()
        }
        loop.run()
        done.wait()
        #expect(checked)
        loop.assertOnLoop()  // not running: nothing to check
        loop.close()
    }

    #if DEBUG
    @Test func anotherThreadWhileTheLoopRunsStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            LoopConfinementTests.whileRunning { $0.assertOnLoop() }
        }
    }
    #endif
}
