// An enum held in a state by SavepointJob (Flink's EnumSerializer writes the constant's ordinal).
public enum SavepointColor { RED, GREEN, BLUE }
