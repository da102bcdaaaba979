package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// closeTimeout bounds the end of a run: flushing the lifecycle reporter, closing the KV
// streams and deregistering the replicas.
const closeTimeout = 30 * time.Second

// run is the state of one Run.
type run struct {
	cfg     *Config
	c       *switchyard.Client
	prompts *Prompts
	ids     []string
	engines []*engine
	rep     *switchyard.Reporter
	d       *driver
	start   time.Time // the load's start (the fixed schedule's origin)
	sampler *sampler
	res     *Result

	// KV totals of the streams closed so far: the server's answers, the events handed to
	// the streams, and publish or close failures.
	kvResp           []*v1.PublishKVEventsResponse
	kvEvents, kvFail int64
	kvMu             sync.Mutex
	kvErr            error // the first publish or close failure
}

// kvFailed keeps the first KV failure for the report.
func (r *run) kvFailed(err error) {
	r.kvMu.Lock()
	defer r.kvMu.Unlock()
	if r.kvErr == nil {
		r.kvErr = err
	}
}

// Run drives the router at cfg.Addr as cfg describes and returns what it measured. It
// registers the replicas, preloads the index, runs the warm-up and the measured window, then
// completes every simulated request early, closes the streams (so the server confirms their
// events) and, with cfg.Cleanup, deregisters the replicas. Errors wrap ErrConfig or ErrSetup;
// when ctx ends during the load the partial result is returned with ctx's error.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	prompts, err := NewPrompts(cfg.Prompts)
	if err != nil {
		return nil, err
	}
	c, err := switchyard.Dial(cfg.Addr, switchyard.WithTimeout(cfg.Timeout))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer c.Close()
	r := &run{cfg: &cfg, c: c, prompts: prompts, res: &Result{Started: time.Now(), Machine: machine()}}
	r.sampler = &sampler{fs: procFS{root: "/proc"}, serverPID: r.serverPID()}
	if err := r.register(ctx); err != nil {
		return nil, err
	}
	if cfg.Cleanup {
		defer r.deregister()
	}
	if err := r.preload(ctx); err != nil {
		return nil, err
	}
	err = r.load(ctx)
	r.finish()
	return r.res, err
}

// serverPID resolves the process to sample: the configured one, or the local listener of
// the address (0 when there is none or sampling is off).
func (r *run) serverPID() int {
	switch r.cfg.ServerPID {
	case -1:
		return 0
	case 0:
		port, ok := localPort(r.cfg.Addr)
		if !ok {
			return 0
		}
		pid, err := procFS{root: "/proc"}.findListener(port)
		if err != nil {
			r.res.Server = &Process{Error: err.Error()}
			return 0
		}
		return pid
	}
	return r.cfg.ServerPID
}

// register registers the replicas "<model>-r00", ... .
func (r *run) register(ctx context.Context) error {
	width := len(strconv.Itoa(r.cfg.Replicas - 1))
	for i := range r.cfg.Replicas {
		id := fmt.Sprintf("%s-r%0*d", r.cfg.Model, max(2, width), i)
		rep := &v1.Replica{Id: id, Model: r.cfg.Model, Address: fmt.Sprintf("%s.bench.invalid:8000", id)}
		if _, err := r.c.RegisterReplica(ctx, rep); err != nil {
			return fmt.Errorf("%w: register %s: %w", ErrSetup, id, err)
		}
		r.ids = append(r.ids, id)
	}
	return nil
}

func (r *run) deregister() {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	for _, id := range r.ids {
		_ = r.c.DeregisterReplica(ctx, id) // best effort: the run is over
	}
}

// publishers creates one engine, with its KV publisher, per replica (once: a new publisher
// would start its sequence again, which the router takes for an engine restart).
func (r *run) publishers() error {
	if len(r.engines) > 0 {
		return nil
	}
	chains := new(atomic.Uint64)
	for i, id := range r.ids {
		pub, err := r.c.NewKVPublisher(id)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSetup, err)
		}
		r.engines = append(r.engines, newEngine(pub, i, chains))
	}
	return nil
}

// closePublishers closes every engine's stream and keeps its totals, the server's answer
// among them.
func (r *run) closePublishers(ctx context.Context) {
	for _, e := range r.engines {
		resp, err := e.pub.Close(ctx)
		st := e.pub.Stats()
		r.kvEvents += st.Events
		r.kvFail += st.Failures
		if err != nil {
			r.kvFail++
			r.kvFailed(fmt.Errorf("closing the stream of %s: %w", r.ids[e.id], err))
		}
		if resp != nil {
			r.kvResp = append(r.kvResp, resp)
		}
	}
}

// preload stores the prompt pool (prompt i on engine i mod replicas), then filler chains up
// to cfg.PreloadBlocks, and waits until the server has applied them.
func (r *run) preload(ctx context.Context) error {
	if r.cfg.PreloadBlocks <= 0 {
		return nil
	}
	start := time.Now()
	if err := r.publishers(); err != nil {
		return err
	}
	promptBlocks := 0
	for i := range r.prompts.Len() {
		promptBlocks += len(r.prompts.Tokens(i)) / engineBlockTokens
	}
	chains := max(0, r.cfg.PreloadBlocks-promptBlocks) / fillerChainBlocks / len(r.engines)
	errs := make([]error, len(r.engines))
	var wg sync.WaitGroup
	for i, e := range r.engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.preload(ctx, r.prompts, len(r.engines), chains)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: preload: %w", ErrSetup, err)
	}
	if err := r.settle(ctx); err != nil {
		return fmt.Errorf("%w: preload: %w", ErrSetup, err)
	}
	r.res.Setup.PreloadSeconds = time.Since(start).Seconds()
	return nil
}

// settle waits until the router has applied what the engines sent: the replicas' cached
// blocks, polled every settlePoll, stop changing.
func (r *run) settle(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, closeTimeout)
	defer cancel()
	prev, same := int64(-1), 0
	for same < 2 {
		reps, err := r.c.ListReplicas(ctx, r.cfg.Model)
		if err != nil {
			return err
		}
		var n int64
		for _, rp := range reps {
			n += rp.GetCache().GetDeviceBlocks()
		}
		if n == prev && n > 0 {
			same++
		} else {
			same = 0
		}
		prev = n
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(settlePoll):
		}
	}
	return nil
}

// settlePoll is how often settle polls the replicas' cache statistics.
const settlePoll = 200 * time.Millisecond

// preload stores this engine's share of the prompt pool and chains filler chains.
func (e *engine) preload(ctx context.Context, prompts *Prompts, engines, chains int) error {
	for i := e.id; i < prompts.Len(); i += engines {
		e.preloadPrompt(prompts.Tokens(i))
		if len(e.batch) >= eventsPerPublish {
			if err := e.flush(ctx); err != nil {
				return err
			}
		}
	}
	for c := range chains {
		e.storeFiller()
		if c%eventsPerPublish == eventsPerPublish-1 {
			if err := e.flush(ctx); err != nil {
				return err
			}
		}
	}
	e.replace = chains > 0
	return e.flush(ctx)
}
