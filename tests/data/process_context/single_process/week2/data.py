# The same helper, imported by a script that starts a process group: every rank runs it.
def split(dataset):
    return dataset[:9], dataset[9:]
