// Package nodelabelmatch is a Filter plugin: a pod fits only nodes carrying one label,
// optionally with one of a set of values.
//
// Its args come as *runtime.Unknown, as for every plugin whose args type is not registered in
// kube-scheduler's scheme, and are decoded strictly: a misspelt field refuses to start the
// scheduler instead of silently matching every node.
package nodelabelmatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	fwk "k8s.io/kube-scheduler/framework"
	"sigs.k8s.io/yaml"
)

// Name is the plugin's name in the registry and in KubeSchedulerConfiguration profiles.
const Name = "NodeLabelMatch"

// Args are the plugin's pluginConfig args.
type Args struct {
	// APIVersion and Kind are accepted, as in-tree args carry them, and otherwise ignored.
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// Label is the node label a pod's node must carry.
	Label string `json:"label"`
	// Values, when set, are the label values that fit; empty means any value.
	Values []string `json:"values,omitempty"`
}

// NodeLabelMatch filters out the nodes without the label (or with another value).
type NodeLabelMatch struct {
	label  string
	values []string
	reason string
}

var (
	_ fwk.FilterPlugin      = &NodeLabelMatch{}
	_ fwk.EnqueueExtensions = &NodeLabelMatch{}
	_ fwk.SignPlugin        = &NodeLabelMatch{}
)

// New builds the plugin from its args; invalid args fail the scheduler's start-up.
func New(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	args, err := decode(obj)
	if err != nil {
		return nil, fmt.Errorf("decoding args: %w", err)
	}
	// The framework prefixes `initializing plugin "NodeLabelMatch": `.
	if errs := validate(args); len(errs) > 0 {
		return nil, fmt.Errorf("invalid args: %w", errs.ToAggregate())
	}
	// The reason ends up in "0/3 nodes are available: 2 <reason>, 1 <other reason>.": no
	// commas of its own, so the values print as [a b] (label values hold no spaces).
	reason := fmt.Sprintf("node(s) didn't have label %s", args.Label)
	if len(args.Values) > 0 {
		reason += fmt.Sprintf(" with one of the values %v", args.Values)
	}
	return &NodeLabelMatch{label: args.Label, values: args.Values, reason: reason}, nil
}

func decode(obj runtime.Object) (*Args, error) {
	args := &Args{}
	if obj == nil {
		return args, nil // no pluginConfig entry: validation reports the missing label
	}
	unknown, ok := obj.(*runtime.Unknown)
	if !ok {
		return nil, fmt.Errorf("want args of type runtime.Unknown, got %T", obj)
	}
	raw := unknown.Raw
	if unknown.ContentType == runtime.ContentTypeYAML {
		converted, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, err
		}
		raw = converted
	}
	if len(raw) == 0 {
		return args, nil
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(args); err != nil {
		return nil, err
	}
	return args, nil
}

func validate(args *Args) field.ErrorList {
	var errs field.ErrorList
	labelPath := field.NewPath("label")
	if args.Label == "" {
		errs = append(errs, field.Required(labelPath, "the node label that pods' nodes must carry"))
	} else {
		for _, msg := range validation.IsQualifiedName(args.Label) {
			errs = append(errs, field.Invalid(labelPath, args.Label, msg))
		}
	}
	valuesPath := field.NewPath("values")
	for i, value := range args.Values {
		for _, msg := range validation.IsValidLabelValue(value) {
			errs = append(errs, field.Invalid(valuesPath.Index(i), value, msg))
		}
		if slices.Contains(args.Values[:i], value) {
			errs = append(errs, field.Duplicate(valuesPath.Index(i), value))
		}
	}
	return errs
}

// Name returns the plugin's name.
func (pl *NodeLabelMatch) Name() string { return Name }

// Filter lets a pod onto a node only if the node carries the label with an allowed value.
func (pl *NodeLabelMatch) Filter(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	node := nodeInfo.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	value, ok := node.Labels[pl.label]
	if ok && (len(pl.values) == 0 || slices.Contains(pl.values, value)) {
		return nil
	}
	// Preempting pods cannot give a node a label: the node stays unfit.
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, pl.reason)
}

// EventsToRegister retries pods this plugin rejected when a node appears or its labels change.
func (pl *NodeLabelMatch) EventsToRegister(_ context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}},
	}, nil
}

// SignPod adds nothing to the pod's signature: the verdict depends on the node alone, so it
// keeps opportunistic batching (KEP-5598) available to the profile.
func (pl *NodeLabelMatch) SignPod(_ context.Context, _ *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return nil, nil
}
