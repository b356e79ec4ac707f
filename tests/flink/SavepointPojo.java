// A POJO held in a state by SavepointJob (public class, public no-arg constructor, public
// fields). A test may compile another version of this class (same name, fields added or
// removed) into a directory placed first on the classpath of a restore run.
public class SavepointPojo {
    public String name;
    public long total;
    public double ratio;
    public Integer tag;

    public SavepointPojo() {}

    public SavepointPojo(String name, long total, double ratio, Integer tag) {
        this.name = name;
        this.total = total;
        this.ratio = ratio;
        this.tag = tag;
    }
}
