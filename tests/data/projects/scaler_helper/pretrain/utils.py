class NativeScalerWithGradNormCount:
    def __call__(self, loss, optimizer):
        loss.backward()
        optimizer.step()
