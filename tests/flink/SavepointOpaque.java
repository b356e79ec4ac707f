// A type Flink cannot treat as a POJO (final fields, no no-arg constructor): its state falls
// back to the Kryo serializer. SavepointJob renders its values as opaque (class and bytes).
public class SavepointOpaque {
    private final String label;
    private final long amount;

    public SavepointOpaque(String label, long amount) {
        this.label = label;
        this.amount = amount;
    }

    public String label() {
        return label;
    }

    public long amount() {
        return amount;
    }
}
