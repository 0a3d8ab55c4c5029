from data import graphs


def build_graphs(name, root):
    """The graph dataset the configuration names."""
    dataset_class = getattr(graphs, name)
    return dataset_class(root=root)
