package workload_test

import (
	"fmt"
	"os"

	"github.com/switchyard-llm/switchyard/integration/workload"
)

// A generated workload can be written as extended Mooncake JSONL and replayed from the file.
func ExampleRLRollouts() {
	c := workload.DefaultRLConfig()
	c.Steps = 1
	w, err := workload.RLRollouts(c)
	if err != nil {
		panic(err)
	}
	s := w.Summarize()
	fmt.Println(s.Requests, "requests in", s.Sessions, "rollouts; first turn", w.Requests[0].InputLength, "tokens")
	if err := workload.WriteMooncake(os.Stdout, &workload.Workload{Requests: w.Requests[:2]}); err != nil {
		panic(err)
	}
	// Output:
	// 80 requests in 8 rollouts; first turn 2048 tokens
	// {"timestamp": 0, "input_length": 2048, "output_length": 1024, "hash_ids": [0, 1, 2, 3], "session_id": "step0/rollout0"}
	// {"timestamp": 0, "input_length": 3584, "output_length": 1024, "hash_ids": [0, 1, 2, 3, 4, 5, 6], "session_id": "step0/rollout0", "delay": 0}
}
