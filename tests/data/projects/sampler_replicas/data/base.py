from torch.utils.data import Sampler


class LengthSampler(Sampler):
    def __init__(self, lengths):
        self.lengths = lengths

    def __len__(self):
        return len(self.lengths)
