NAME = "fewest-pods"
WEIGHT = 2


def score(pod, node, ctx):
    # Prefer nodes with fewer pods: 100 on an empty node.
    return max(0.0, 100.0 - 10.0 * len(ctx.pods_on(node["metadata"]["name"])))
