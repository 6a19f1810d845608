// SigV4 against the examples AWS publishes in the S3 API reference
// ("Authenticating Requests: Using Query Parameters" and "Using the
// Authorization Header"): the same inputs must give the same signatures.

import Foundation
import Testing
@testable import GuildhallFiles

@Suite struct SignatureV4Tests {
    let credentials = SigningCredentials(accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
    /// 2013-05-24 00:00:00 UTC.
    let date = Date(timeIntervalSince1970: 1_369_353_600)

    @Test func aPresignedGetIsAWSsExample() {
        let query = SignatureV4.presignedQuery(SignedRequest(method: "GET", host: "examplebucket.s3.amazonaws.com", path: "/test.txt"),
                                               expires: 86400, credentials: credentials, at: date)
        #expect(query == "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
                + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    }

    @Test func aGetWithARangeHeaderIsAWSsExample() {
        let request = SignedRequest(method: "GET", host: "examplebucket.s3.amazonaws.com", path: "/test.txt", headers: [("Range", "bytes=0-9")])
        let headers = SignatureV4.signedHeaders(request, payloadHash: SignatureV4.emptyPayload, credentials: credentials, at: date)
        #expect(headers.first { $0.0 == "Authorization" }?.1
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(headers.first { $0.0 == "x-amz-date" }?.1 == "20130524T000000Z")
        #expect(SignatureV4.emptyPayload == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func pathsAndQueriesAreEncodedAsS3ReadsThem() {
        #expect(SignatureV4.encodedPath("/bucket/a b/c$d/文件.txt") == "/bucket/a%20b/c%24d/%E6%96%87%E4%BB%B6.txt")
        #expect(SignatureV4.canonicalQuery([("prefix", "J"), ("max-keys", "2"), ("a", "x/y=z")]) == "a=x%2Fy%3Dz&max-keys=2&prefix=J")
        #expect(SignatureV4.canonicalHeaders([("X-Amz-Meta", "  a   b  "), ("Host", "h")]).lines == "host:h\nx-amz-meta:a b\n")
    }
}
