-- An enum state machine (IDLE -> LOAD -> RUN -> DONE -> IDLE) stepping on a 20 ns clock,
-- an integer cycle counter, a real ramp, a boolean and a bit, and a record and an array
-- signal, inside a nested entity; run for 400 ns.
library ieee;
use ieee.std_logic_1164.all;

package fsm_types is
  type state_t is (IDLE, LOAD, RUN, DONE);
  type bus_t is record
    valid : std_logic;
    data : std_logic_vector(7 downto 0);
    tag : integer range 0 to 15;
  end record;
  type lanes_t is array (0 to 2) of std_logic;
end package;

library ieee;
use ieee.std_logic_1164.all;
use work.fsm_types.all;

entity stepper is
  port (clk : in std_logic; state : out state_t; busy : out boolean);
end entity;

architecture rtl of stepper is
  signal s : state_t := IDLE;
begin
  process (clk) begin
    if rising_edge(clk) then
      case s is
        when IDLE => s <= LOAD;
        when LOAD => s <= RUN;
        when RUN => s <= DONE;
        when DONE => s <= IDLE;
      end case;
    end if;
  end process;
  state <= s;
  busy <= s = RUN or s = LOAD;
end architecture;

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.fsm_types.all;

entity fsm_tb is
end entity;

architecture sim of fsm_tb is
  signal clk : std_logic := '0';
  signal state : state_t;
  signal busy : boolean;
  signal cycles : integer := 0;
  signal ramp : real := 0.0;
  signal toggle : bit := '0';
  signal bus_s : bus_t := (valid => '0', data => (others => '0'), tag => 0);
  signal lanes : lanes_t := (others => '0');
begin
  clk <= not clk after 10 ns when now < 400 ns;
  u_stepper : entity work.stepper port map (clk => clk, state => state, busy => busy);
  process (clk) begin
    if rising_edge(clk) then
      cycles <= cycles + 1;
      ramp <= ramp + 0.5;
      toggle <= not toggle;
      bus_s.valid <= not bus_s.valid;
      bus_s.data <= std_logic_vector(to_unsigned((cycles * 3) mod 256, 8));
      bus_s.tag <= cycles mod 16;
      lanes <= lanes(1 to 2) & not lanes(0);
    end if;
  end process;
end architecture;
