package main

import (
	"strings"

	"github.com/switchyard-llm/switchyard/clients/vllm"
)

// vllmEndpoints is the repeatable -vllm-events flag. In a config file it is
// a list of the same strings.
type vllmEndpoints []vllm.Endpoint

func (v *vllmEndpoints) String() string {
	parts := make([]string, len(*v))
	for i, ep := range *v {
		parts[i] = ep.String()
	}
	return strings.Join(parts, " ")
}

func (v *vllmEndpoints) Set(s string) error {
	ep, err := vllm.ParseEndpointFlag(s)
	if err != nil {
		return err
	}
	*v = append(*v, ep)
	return nil
}
