from collections import defaultdict

from torch.utils.data import Dataset


class SequenceDataset(Dataset):
    """Keeps a lambda defaultdict; only DataLoader workers or a spawn would pickle it."""

    def __init__(self, rows):
        self.user_seqs = defaultdict(lambda: ([], []))
        for user, item, time in rows:
            self.user_seqs[user][0].append(item)
            self.user_seqs[user][1].append(time)
        self.users = sorted(self.user_seqs)

    def __len__(self):
        return len(self.users)

    def __getitem__(self, i):
        return self.user_seqs[self.users[i]]


class SessionDataset(Dataset):
    """Builds the dict in a helper and keeps what it returns: the same journey."""

    def __init__(self, rows):
        self.sessions = self._load_sessions(rows)

    def _load_sessions(self, rows):
        sessions = defaultdict(lambda: [])
        for session, item in rows:
            sessions[session].append(item)
        return sessions

    def __len__(self):
        return len(self.sessions)
