"""The one client gateway: kubeconfig handling, the :class:`~kschedctl.kubeclient.client.Cluster`
connection and list-then-watch. Below both the lab and the tool; imports only base (and the
kubernetes client, lazily). Nothing is imported here, so offline commands stay client-free."""
