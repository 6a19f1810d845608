// NodeOutbound: what the node's loops tell each other for the total cap
// (OutboundBounds.swift), tested directly: the total is the sum of what each
// loop last told, a loop's largest session never exceeds what the loop holds,
// each loop hears the largest of the others, and the peak keeps the most settled.

import Testing
@testable import GuildhallServer

@Suite struct NodeOutboundTests {
    @Test func theTotalIsWhatEachLoopLastTold() {
        let node = NodeOutbound(loops: 3)
        #expect(node.told(loop: 0, queued: 100) == 100)
        #expect(node.told(loop: 2, queued: 50) == 150)
        #expect(node.told(loop: 0, queued: 10) == 60, "a loop's later word replaces its earlier one")
    }

    @Test func eachLoopHearsTheLargestSessionOfTheOthers() {
        let node = NodeOutbound(loops: 3)
        node.told(loop: 0, queued: 900)
        node.told(loop: 0, largest: 700)
        node.told(loop: 1, queued: 500)
        node.told(loop: 1, largest: 400)
        #expect(node.largest(besides: 0) == 400)
        #expect(node.largest(besides: 1) == 700)
        #expect(node.largest(besides: 2) == 700)
        // Loop 0 drained to 300: no session of it can hold 700 any more.
        node.told(loop: 0, queued: 300)
        #expect(node.largest(besides: 1) == 300)
        node.told(loop: 0, queued: 0)
        #expect(node.largest(besides: 1) == 0, "a loop that holds nothing holds no large session")
    }

    @Test func thePeakIsTheMostSettled() {
        let node = NodeOutbound(loops: 2)
        node.settled(300)
        node.settled(200)
        #expect(node.peak == 300)
        node.settled(301)
        #expect(node.peak == 301)
    }
}
