"""Filter plugin: a pod annotated example.com/rack goes only to nodes of that rack."""

RACK = "example.com/rack"


def filter(pod, node, ctx):
    want = (pod["metadata"].get("annotations") or {}).get(RACK)
    have = (node["metadata"].get("labels") or {}).get(RACK)
    if want and want != have:
        return f"node is in rack {have or 'none'}, the pod wants {want}"
    return None
