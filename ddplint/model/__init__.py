"""What ddplint knows of the program as a whole, beyond one file's semantic model: the
`Program` (ddplint.model.program) follows values across functions and modules."""
