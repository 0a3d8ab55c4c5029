import os

import torch
from torch_geometric.data import Data, InMemoryDataset


class CitationGraphs(InMemoryDataset):
    """PyG runs process() when it builds the dataset and finds no processed file."""

    def __init__(self, root):
        super().__init__(root)
        self.data, self.slices = torch.load(self.processed_paths[0])

    @property
    def processed_file_names(self):
        return "graphs.pt"

    def process(self):
        edges = torch.load(os.path.join(self.raw_dir, "edges.pt"))
        graph = Data(edge_index=edges)
        torch.save(self.collate([graph]), self.processed_paths[0])


class Citations(CitationGraphs):
    pass
