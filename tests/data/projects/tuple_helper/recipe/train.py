from recipe.data import build, build_eval


def train(model, dataset, epochs):
    loader, sampler = build(dataset)
    for epoch in range(epochs):
        for batch in loader:
            model(batch).backward()


def train_discarding_the_sampler(model, dataset, epochs):
    loader, _ = build(dataset)
    for epoch in range(epochs):
        for batch in loader:
            model(batch).backward()


def train_right(model, dataset, epochs):
    loader, sampler = build(dataset)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            model(batch).backward()


def evaluate(model, dataset, rounds):
    loader, sampler = build_eval(dataset)
    done = 0
    while done < rounds:
        for batch in loader:
            model.score(batch)
        done += 1
