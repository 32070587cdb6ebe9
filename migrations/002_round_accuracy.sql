-- 001's Accuracy: the mean "correct" part of a round's answers, where the reward has parts (None otherwise).
ALTER TABLE rounds ADD COLUMN accuracy DOUBLE PRECISION;
