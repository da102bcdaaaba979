package sim

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/switchyard-llm/switchyard/integration/workload"
)

func TestTableAndPlots(t *testing.T) {
	c := workload.DefaultRLConfig()
	c.Steps, c.Turns, c.OutputTokens, c.StragglerOutputTokens, c.Concurrency = 1, 2, 64, 256, 4
	w, err := workload.RLRollouts(c)
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := ParseVariants("token_load,ch=consistent_hash")
	rep, err := RunAll(t.Context(), w, Config{Replicas: 2, Engine: DefaultEngine(), Replay: workload.ReplayConfig{Concurrency: 4}}, vs, 2)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"token_load", "ch ", "TTFT p50/p90/p99", "closed loop, 4 concurrent"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
	if rep.Schema != Schema || rep.Reference.PooledPrefixHitRate <= 0 || len(rep.Results[0].TTFTCDF) != 101 {
		t.Errorf("schema %q, pooled %v, cdf %d points", rep.Schema, rep.Reference.PooledPrefixHitRate, len(rep.Results[0].TTFTCDF))
	}
	for name, svg := range map[string][]byte{"cdf": TTFTCDFSVG(rep), "blocks": DecodeBlocksSVG(rep)} {
		d := xml.NewDecoder(bytes.NewReader(svg))
		lines := 0
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: invalid SVG: %v", name, err)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
				lines++
			}
		}
		if want := map[string]int{"cdf": 2, "blocks": 4}[name]; lines != want {
			t.Errorf("%s: %d lines, want %d", name, lines, want)
		}
	}
}
