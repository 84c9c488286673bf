// Command custom-kube-scheduler is kube-scheduler v1.36.3 with one out-of-tree plugin,
// NodeLabelMatch, compiled in: the way scheduler-plugins and every custom scheduler is built
// (kubernetes-sigs/scheduler-plugins cmd/scheduler/main.go). The upstream command stays
// untouched; app.WithPlugin only adds the plugin to the registry its profiles choose from.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version" // for version metric registration
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"kschedctl.io/labbin/custom-scheduler/nodelabelmatch"
)

func main() {
	command := app.NewSchedulerCommand(app.WithPlugin(nodelabelmatch.Name, nodelabelmatch.New))
	os.Exit(cli.Run(command))
}
