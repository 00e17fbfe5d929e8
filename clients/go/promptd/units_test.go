package promptd

import (
	"os"
	"testing"
)

// Start asks for UTF-8 byte offsets, so a Go string slices to each segment, emoji and CJK
// included; and it follows the server's own request size limit.
func TestStartAsksForByteOffsetsAndFollowsTheServerLimit(t *testing.T) {
	c := startSidecar(t, Options{Process: ProcessOptions{Env: append(os.Environ(), "PROMPTD_MAX_MESSAGE_BYTES=200000")}})
	if got := c.Handshake().OffsetUnit; got != "utf8_bytes" {
		t.Fatalf("offset unit %q", got)
	}
	if got := c.Handshake().Limits.MaxMessageBytes; got != 200000 {
		t.Fatalf("limit %d", got)
	}
	if got := c.Conn().opts.MaxRequestBytes; got != 200000 {
		t.Fatalf("the client's request limit is %d, not the server's", got)
	}
	text := "東京 😀👩‍👩‍👧 [[cite:a]] 中文 \ue200cite\ue202b\ue201 🇯🇵 end"
	res, err := c.CitationParse(testContext(t), CitationParseParams{Text: text, Final: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, seg := range res.Segments {
		if got := text[seg.Start:seg.End]; got != seg.Text {
			t.Fatalf("text[%d:%d] = %q, segment %q", seg.Start, seg.End, got, seg.Text)
		}
	}
}
